// Helpers shared by the standalone benchmark binaries: the median wall time of repeated runs
// and the comma-separated thread list of --threads.
#pragma once
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace fastfs::bench {

template <class F>
double median_seconds(int repeat, F&& f) {
    std::vector<double> t;
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

inline std::vector<int> parse_list(const std::string& s) {
    std::vector<int> out;
    for (std::size_t pos = 0; pos <= s.size();) {
        std::size_t comma = s.find(',', pos);
        if (comma == std::string::npos) comma = s.size();
        out.push_back(std::stoi(s.substr(pos, comma - pos)));
        pos = comma + 1;
    }
    return out;
}

}  // namespace fastfs::bench
