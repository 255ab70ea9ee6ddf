#include "service/ports/memory/memory_price_book_store.hpp"

#include <algorithm>
#include <utility>

namespace gpucost::ports {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

pricing::Error NoBook(std::string_view id) {
    return MakeError(ErrorCode::kNotFound, "no price book with id '" + std::string(id) + "'", "id");
}

}  // namespace

void MemoryPriceBookStore::AddTeam(const std::string& team) {
    std::lock_guard lock(mutex_);
    teams_.insert(team);
}

void MemoryPriceBookStore::AddKeyDefault(const Principal& key, const std::string& book) {
    std::lock_guard lock(mutex_);
    key_defaults_.emplace(book, "gpc_" + key.prefix + " (" + key.name + ")");
}

StoredPriceBook MemoryPriceBookStore::Shown(const Book& book, std::size_t index) const {
    StoredPriceBook b = book.versions.at(index);
    b.latest_version = static_cast<std::int64_t>(book.versions.size());
    b.team = book.team;
    b.created_at_us = book.created_at_us;
    b.shared_with = book.shared_with;
    return b;
}

pricing::Status MemoryPriceBookStore::Share(Book& book,
                                            const std::vector<std::string>& teams) const {
    std::vector<std::string> shared;
    for (std::size_t i = 0; i < teams.size(); ++i) {
        if (!teams_.contains(teams[i])) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "no team '" + teams[i] + "' (gpucost apikey create --team makes one)",
                             "/shared_with/" + std::to_string(i));
        }
        shared.push_back(teams[i]);
    }
    std::sort(shared.begin(), shared.end());
    shared.erase(std::unique(shared.begin(), shared.end()), shared.end());
    book.shared_with = std::move(shared);
    return pricing::Ok{};
}

void MemoryPriceBookStore::AddVersion(Book& book, const WriteRequest& request,
                                      const StoredPriceBook& draft) const {
    StoredPriceBook v;
    v.id = draft.id;
    v.version = static_cast<std::int64_t>(book.versions.size()) + 1;
    v.name = draft.name;
    v.rules_json = draft.rules_json;
    v.owned_capacity_json = draft.owned_capacity_json;
    v.written_at_us = now_us_;
    v.written_by = request.principal.name;
    book.versions.push_back(std::move(v));
}

pricing::Result<StoredResponse> MemoryPriceBookStore::Create(const WriteRequest& request,
                                                             const StoredPriceBook& draft,
                                                             const BookEncoder& encode) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        if (books_.contains(draft.id)) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "a price book with id '" + draft.id +
                                 "' exists or existed (ids of deleted books are not reused); "
                                 "PUT /v1/price-books/" +
                                 draft.id + " writes a new version of it",
                             "/id");
        }
        Book book{request.principal.team, false, now_us_, {}, {}};
        if (draft.shared_with) {
            if (auto shared = Share(book, *draft.shared_with); !shared.ok()) return shared.error();
        }
        StoredPriceBook named = draft;
        AddVersion(book, request, named);
        const Book& stored = books_.emplace(draft.id, std::move(book)).first->second;
        return encode(Shown(stored, 0));
    });
}

pricing::Result<StoredPriceBook> MemoryPriceBookStore::Get(std::string_view id,
                                                           std::optional<std::int64_t> version) {
    std::lock_guard lock(mutex_);
    const auto found = books_.find(id);
    if (found == books_.end() || found->second.deleted) return NoBook(id);
    const Book& book = found->second;
    const auto count = static_cast<std::int64_t>(book.versions.size());
    const std::int64_t wanted = version && *version != 0 ? *version : count;
    if (wanted < 1 || wanted > count) {
        return MakeError(
            ErrorCode::kNotFound,
            "price book '" + std::string(id) + "' has versions 1 to " + std::to_string(count),
            "version");
    }
    return Shown(book, static_cast<std::size_t>(wanted - 1));
}

pricing::Result<std::vector<StoredPriceBook>> MemoryPriceBookStore::List() {
    std::lock_guard lock(mutex_);
    std::vector<StoredPriceBook> out;
    for (const auto& [id, book] : books_) {
        if (!book.deleted) out.push_back(Shown(book, book.versions.size() - 1));
    }
    return out;
}

pricing::Result<MemoryPriceBookStore::Book*> MemoryPriceBookStore::ForChange(
    const WriteRequest& request, std::string_view id) {
    const auto found = books_.find(id);
    if (found == books_.end() || found->second.deleted) return NoBook(id);
    Book& book = found->second;
    if (book.team != request.principal.team) {
        const auto& shared = book.shared_with;
        if (std::find(shared.begin(), shared.end(), request.principal.team) == shared.end()) {
            return NoBook(id);
        }
        return MakeError(ErrorCode::kFailedPrecondition,
                         "price book '" + std::string(id) + "' belongs to team '" + book.team +
                             "', which shares it with team '" + request.principal.team +
                             "' to plan with; only its team writes it",
                         kOwnerField);
    }
    const std::string etag = PriceBookEtag(static_cast<std::int64_t>(book.versions.size()));
    if (request.if_match && !IfMatchAccepts(*request.if_match, etag)) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "If-Match does not match the price book's current ETag " + etag +
                             "; it changed since you read it: read it again and reapply your "
                             "change",
                         kIfMatchField);
    }
    return &book;
}

pricing::Result<StoredResponse> MemoryPriceBookStore::Replace(const WriteRequest& request,
                                                              std::string_view id,
                                                              const StoredPriceBook& next,
                                                              const BookEncoder& encode) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        auto found = ForChange(request, id);
        if (!found.ok()) return found.error();
        Book changed = *found.value();
        if (next.shared_with) {
            if (auto shared = Share(changed, *next.shared_with); !shared.ok()) {
                return shared.error();
            }
        }
        StoredPriceBook named = next;
        named.id = std::string(id);
        AddVersion(changed, request, named);
        *found.value() = std::move(changed);
        return encode(Shown(*found.value(), found.value()->versions.size() - 1));
    });
}

pricing::Result<StoredResponse> MemoryPriceBookStore::Delete(const WriteRequest& request,
                                                             std::string_view id) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        auto found = ForChange(request, id);
        if (!found.ok()) return found.error();
        const auto [first, last] = key_defaults_.equal_range(id);
        if (first != last) {
            std::string named;
            for (auto k = first; k != last; ++k) named += (named.empty() ? "" : ", ") + k->second;
            return MakeError(ErrorCode::kFailedPrecondition,
                             "price book '" + std::string(id) +
                                 "' is the default book of API key(s) " + named +
                                 "; clear it first (gpucost apikey price-book PREFIX none) or "
                                 "name another book",
                             "id");
        }
        found.value()->deleted = true;
        return DeletedAnswer();
    });
}

}  // namespace gpucost::ports
