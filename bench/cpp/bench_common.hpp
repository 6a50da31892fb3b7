// Helpers shared by the standalone benchmark binaries: the median wall time of repeated runs
// and the comma-separated thread list of --threads.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <ctime>
#include <vector>

namespace fastfs::bench {

// Set by a binary's --cpu: time with the process's CPU time instead of the wall clock (on one
// thread, what a shared, loaded machine still measures faithfully).
inline bool& cpu_clock() {
    static bool on = false;
    return on;
}

inline double now_seconds() {
    if (cpu_clock()) {
        timespec ts{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

template <class F>
double median_seconds(int repeat, F&& f) {
    std::vector<double> t;
    for (int r = 0; r < repeat; ++r) {
        const double start = now_seconds();
        f();
        t.push_back(now_seconds() - start);
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

// The options of bench_simba and bench_rgs: --samples M --features N --threads 1,2
// --repeat R. Returns false (after printing why, or the usage for --help) when the program
// should exit, with `status` its exit code.
struct SizeArgs {
    long samples = 1000, features = 500;
    std::vector<int> threads{1, 2};
    int repeat = 5;
};

inline bool parse_size_args(int argc, char** argv, const char* name, long min_features,
                            SizeArgs& a, int& status) {
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "usage: %s [--samples M] [--features N] [--threads 1,2] [--repeat R]\n",
                         name);
            status = k == "--help" ? 0 : 2;
            return false;
        }
        const std::string v = argv[++i];
        if (k == "--samples") a.samples = std::stol(v);
        else if (k == "--features") a.features = std::stol(v);
        else if (k == "--threads") a.threads = parse_list(v);
        else if (k == "--repeat") a.repeat = std::stoi(v);
        else {
            std::fprintf(stderr, "unknown option %s\n", k.c_str());
            status = 2;
            return false;
        }
    }
    if (a.samples < 4 || a.features < min_features || a.repeat < 1) {
        std::fprintf(stderr, "sizes must be positive (samples >= 4, features >= %ld)\n", min_features);
        status = 2;
        return false;
    }
    return true;
}

}  // namespace fastfs::bench
