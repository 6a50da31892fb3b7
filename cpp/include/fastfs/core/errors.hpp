// Error vocabulary of the core: invalid_argument / out_of_range for bad input (ValueError /
// IndexError in Python), Interrupted when a stop hook asks a long loop to end.
#pragma once
#include <stdexcept>
#include <string>

namespace fastfs {

inline void require(bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument(message);
}

inline void require_index(bool ok, const std::string& message) {
    if (!ok) throw std::out_of_range(message);
}

// Literal messages: no std::string is built unless the check fails, which matters for checks
// run once per sample or per stored entry.
inline void require(bool ok, const char* message) {
    if (!ok) throw std::invalid_argument(message);
}

inline void require_index(bool ok, const char* message) {
    if (!ok) throw std::out_of_range(message);
}

// Thrown between chunks of work when the caller's stop hook returns true (Ctrl-C in Python).
struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("fastfs: computation interrupted") {}
};

}  // namespace fastfs
