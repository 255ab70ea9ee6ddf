#include "service/http/transport/rate_limit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace gpucost::http {

RateLimiter::RateLimiter(RateLimitOptions options) : options_(options) {
    if (options_.burst < 1) {
        options_.burst = std::max(1.0, options_.requests_per_s);
    }
}

RateDecision RateLimiter::Take(const std::string& identity, Clock::time_point now) {
    if (!enabled()) {
        return {};
    }
    Shard& shard = shards_[std::hash<std::string>{}(identity) % kShards];
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.buckets.find(identity);
    if (it == shard.buckets.end()) {
        if (shard.buckets.size() >= options_.max_callers / kShards) {
            Forget(shard, now);
        }
        it = shard.buckets.emplace(identity, Bucket{options_.burst, now}).first;
    }
    Bucket& b = it->second;
    double elapsed_s = std::chrono::duration<double>(now - b.updated).count();
    b.tokens =
        std::min(options_.burst, b.tokens + std::max(0.0, elapsed_s) * options_.requests_per_s);
    b.updated = now;
    RateDecision decision;
    if (b.tokens >= 1) {
        b.tokens -= 1;
    } else {
        rejected_.fetch_add(1, std::memory_order_relaxed);
        double wait_s = (1 - b.tokens) / options_.requests_per_s;
        decision.allowed = false;
        decision.retry_after_s = std::max(1, static_cast<int>(std::ceil(wait_s)));
    }
    decision.remaining = static_cast<int>(std::floor(b.tokens));
    decision.full_in_s =
        static_cast<int>(std::ceil((options_.burst - b.tokens) / options_.requests_per_s));
    return decision;
}

std::string RateLimiter::PolicyField() const {
    const auto quota = static_cast<long long>(std::floor(options_.burst));
    const auto window_s =
        std::max(1LL, static_cast<long long>(std::ceil(options_.burst / options_.requests_per_s)));
    return "\"default\";q=" + std::to_string(quota) + ";w=" + std::to_string(window_s);
}

std::string RateLimiter::StateField(const RateDecision& decision) {
    return "\"default\";r=" + std::to_string(decision.remaining) +
           ";t=" + std::to_string(decision.full_in_s);
}

// Drops the buckets that have refilled completely; if none has, the oldest half, so the
// table stays bounded even under a flood of distinct callers.
void RateLimiter::Forget(Shard& shard, Clock::time_point now) {
    const double refill_s = options_.burst / options_.requests_per_s;
    std::erase_if(shard.buckets, [&](const auto& entry) {
        return std::chrono::duration<double>(now - entry.second.updated).count() >= refill_s;
    });
    if (shard.buckets.size() < options_.max_callers / kShards) {
        return;
    }
    std::vector<Clock::time_point> times;
    times.reserve(shard.buckets.size());
    for (const auto& [id, b] : shard.buckets) times.push_back(b.updated);
    auto middle = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
    std::nth_element(times.begin(), middle, times.end());
    const auto cutoff = *middle;
    std::erase_if(shard.buckets, [&](const auto& entry) { return entry.second.updated <= cutoff; });
}

}  // namespace gpucost::http
