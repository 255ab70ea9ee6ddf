#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace gpucost::http {

struct RateLimitOptions {
    // Sustained requests per second per caller; 0 turns limiting off.
    double requests_per_s = 0;
    // Requests a caller may send at once after being idle (bucket size); at least 1.
    double burst = 0;
    // Callers remembered at most; beyond it, buckets that have refilled are forgotten first
    // (a full bucket and a forgotten one behave the same).
    std::size_t max_callers = 100000;
};

struct RateDecision {
    bool allowed = true;
    // Whole seconds until one token is back (the Retry-After value); 0 when allowed.
    int retry_after_s = 0;
    // Whole tokens left in the caller's bucket after this request (RateLimit's r).
    int remaining = 0;
    // Whole seconds until the caller's bucket is full again (RateLimit's t); 0 when it is.
    int full_in_s = 0;
};

// Token bucket per caller identity ("key:<id>" or "addr:<peer address>"). Thread-safe; the
// identities are spread over shards so that workers rarely wait on one another.
class RateLimiter {
public:
    using Clock = std::chrono::steady_clock;

    explicit RateLimiter(RateLimitOptions options);

    bool enabled() const { return options_.requests_per_s > 0; }
    RateDecision Take(const std::string& identity, Clock::time_point now = Clock::now());

    // The IETF rate-limit fields (draft-ietf-httpapi-ratelimit-headers-10, the structured-field
    // form) of one token bucket, named "default": the policy is the burst as the quota `q`
    // over the time the bucket takes to fill from empty as the window `w`; the state is the
    // decision's whole tokens left as `r` and seconds until the bucket is full as `t`
    // (docs/api.md "Rate limits").
    std::string PolicyField() const;
    static std::string StateField(const RateDecision& decision);
    // Requests refused so far (for /metrics).
    std::uint64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }

private:
    struct Bucket {
        double tokens = 0;
        Clock::time_point updated;
    };
    struct Shard {
        std::mutex mutex;
        std::unordered_map<std::string, Bucket> buckets;
    };
    static constexpr std::size_t kShards = 16;

    void Forget(Shard& shard, Clock::time_point now);

    RateLimitOptions options_;
    std::array<Shard, kShards> shards_;
    std::atomic<std::uint64_t> rejected_{0};
};

}  // namespace gpucost::http
