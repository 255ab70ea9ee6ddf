#include "service/http/transport/request_context.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>

#include "service/http/transport/request_frame.hpp"

namespace gpucost::http {
namespace {

bool IsSafeId(const std::string& id) {
    if (id.empty() || id.size() > 64) {
        return false;
    }
    for (char c : id) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.';
        if (!ok) {
            return false;
        }
    }
    return true;
}

std::string NewRequestId() {
    static const std::uint64_t kProcessSalt = std::random_device{}();
    static std::atomic<std::uint64_t> counter{0};
    std::uint64_t n = counter.fetch_add(1, std::memory_order_relaxed);
    static constexpr char kHex[] = "0123456789abcdef";
    std::uint64_t salt = kProcessSalt;
    std::string out;
    out.reserve(24);
    for (int i = 0; i < 8; ++i) {
        out += kHex[salt & 0xFU];
        salt >>= 4U;
    }
    out += '-';
    std::string digits;
    do {
        digits += kHex[n & 0xFU];
        n >>= 4U;
    } while (n != 0);
    out.append(digits.rbegin(), digits.rend());
    return out;
}

}  // namespace

RequestContext& CurrentRequestContext() {
    thread_local RequestContext context;
    return context;
}

void BeginRequest(const std::string& client_request_id) {
    RequestContext& ctx = CurrentRequestContext();
    ctx.request_id = IsSafeId(client_request_id) ? client_request_id : NewRequestId();
    ctx.started_at = std::chrono::steady_clock::now();
    ctx.route.clear();
    ctx.missing_length = false;
}

namespace {
thread_local std::vector<std::string> t_empty_header_fields;
}  // namespace

void SetEmptyHeaderFields(std::vector<std::string> names) {
    t_empty_header_fields = std::move(names);
}

bool HeaderSentEmpty(std::string_view name) {
    return std::any_of(t_empty_header_fields.begin(), t_empty_header_fields.end(),
                       [name](const std::string& field) { return EqualsIgnoreCase(field, name); });
}

}  // namespace gpucost::http
