#include "service/http/codec/page_cursor.hpp"

#include <array>
#include <memory>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace gpucost::http {

namespace {

using pricing::ErrorCode;
using pricing::MakeError;

constexpr char kFormat = '\x01';               // the sealed format's version: the first byte
constexpr std::size_t kTagBytes = 16;          // HMAC-SHA256 truncated: 128 bits
constexpr std::size_t kMaxCursorChars = 4096;  // a plan body caps its cursor at this too
constexpr char kSep = '\x1f';                  // never in a listing name or a version
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

using Key = std::array<unsigned char, 32>;

// A 256-bit key for `purpose`, derived from this release's built-in secret.
Key DeriveKey(std::string_view purpose) {
    static constexpr std::string_view kSecret = "gpucost page cursor, sealed format 1";
    Key key{};
    unsigned int size = 0;
    HMAC(EVP_sha256(), kSecret.data(), static_cast<int>(kSecret.size()),
         reinterpret_cast<const unsigned char*>(purpose.data()), purpose.size(), key.data(), &size);
    return key;
}

const Key& EncryptionKey() {
    static const Key key = DeriveKey("encrypt");
    return key;
}

const Key& MacKey() {
    static const Key key = DeriveKey("authenticate");
    return key;
}

std::array<unsigned char, kTagBytes> TagOf(std::string_view payload) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int size = 0;
    HMAC(EVP_sha256(), MacKey().data(), static_cast<int>(MacKey().size()),
         reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), mac.data(), &size);
    std::array<unsigned char, kTagBytes> tag{};
    std::copy_n(mac.begin(), kTagBytes, tag.begin());
    return tag;
}

// AES-256-CTR under the tag as counter block (synthetic IV): the same call encrypts and
// decrypts. Empty on an OpenSSL failure.
std::optional<std::string> Ctr(const std::array<unsigned char, kTagBytes>& iv,
                               std::string_view in) {
    std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                        &EVP_CIPHER_CTX_free);
    std::string out(in.size(), '\0');
    int written = 0;
    if (!ctx ||
        EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_ctr(), nullptr, EncryptionKey().data(),
                           iv.data()) != 1 ||
        EVP_EncryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &written,
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size())) != 1) {
        return std::nullopt;
    }
    return out;
}

std::string Base64Url(std::string_view bytes) {
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (char c : bytes) {
        buffer = (buffer << 8U) | static_cast<unsigned char>(c);
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out += kB64[(buffer >> static_cast<unsigned>(bits)) & 0x3FU];
        }
    }
    if (bits > 0) out += kB64[(buffer << static_cast<unsigned>(6 - bits)) & 0x3FU];
    return out;
}

std::optional<std::string> FromBase64Url(std::string_view text) {
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (char c : text) {
        const std::string_view alphabet(kB64, sizeof kB64 - 1);
        const std::size_t value = alphabet.find(c);
        if (value == std::string_view::npos) return std::nullopt;
        buffer = (buffer << 6U) | static_cast<unsigned>(value);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buffer >> static_cast<unsigned>(bits)) & 0xFFU);
        }
    }
    // Only the one text that encodes these bytes: trailing bits and characters are not ignored.
    if (Base64Url(out) != text) return std::nullopt;
    return out;
}

pricing::Error NotACursor() {
    return MakeError(ErrorCode::kInvalidArgument,
                     "is not a cursor this list issued (cursors are opaque: send the previous "
                     "page's next_cursor unchanged, or start again without cursor)",
                     "cursor");
}

}  // namespace

std::string SealCursor(std::string_view payload) {
    const auto tag = TagOf(payload);
    auto sealed = Ctr(tag, payload);
    std::string bytes(1, kFormat);
    bytes.append(reinterpret_cast<const char*>(tag.data()), tag.size());
    bytes += sealed.value_or(std::string());
    return Base64Url(bytes);
}

std::optional<std::string> OpenCursor(std::string_view text) {
    if (text.size() > kMaxCursorChars) return std::nullopt;
    auto bytes = FromBase64Url(text);
    if (!bytes || bytes->size() < 1 + kTagBytes || bytes->front() != kFormat) return std::nullopt;
    std::array<unsigned char, kTagBytes> tag{};
    std::copy_n(bytes->begin() + 1, kTagBytes, tag.begin());
    auto payload = Ctr(tag, std::string_view(*bytes).substr(1 + kTagBytes));
    if (!payload) return std::nullopt;
    const auto expected = TagOf(*payload);
    if (CRYPTO_memcmp(expected.data(), tag.data(), kTagBytes) != 0) return std::nullopt;
    return payload;
}

pricing::Result<PageRequest> ReadPageRequest(const QueryParams& params, std::string_view listing,
                                             std::string_view version) {
    auto limit = params.Int("limit");
    if (!limit.ok()) return limit.error();
    auto cursor = params.One("cursor");
    if (!cursor.ok()) return cursor.error();
    PageRequest page;
    if (limit.value()) {
        if (*limit.value() < 1 || static_cast<std::size_t>(*limit.value()) > kMaxPageSize) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "must be between 1 and " + std::to_string(kMaxPageSize), "limit");
        }
        page.limit = static_cast<std::size_t>(*limit.value());
    }
    if (!cursor.value()) return page;
    auto payload = OpenCursor(*cursor.value());
    if (!payload) return NotACursor();
    // listing SEP version SEP position
    const std::size_t first = payload->find(kSep);
    const std::size_t second = first == std::string::npos ? first : payload->find(kSep, first + 1);
    if (second == std::string::npos || payload->substr(0, first) != listing) return NotACursor();
    const std::string began_on = payload->substr(first + 1, second - first - 1);
    if (began_on != version) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "the list changed since this walk began (" + began_on + ", now " +
                             std::string(version) +
                             "): its pages would list items twice or never; start again "
                             "without cursor",
                         "cursor");
    }
    page.after = payload->substr(second + 1);
    return page;
}

std::string NextPageCursor(std::string_view listing, std::string_view after,
                           std::string_view version) {
    std::string payload(listing);
    payload += kSep;
    payload += version;
    payload += kSep;
    payload += after;
    return SealCursor(payload);
}

}  // namespace gpucost::http
