#include "service/storage/pg_session.hpp"

#include "service/log.hpp"
#include "service/storage/pg_connection.hpp"

namespace gpucost::storage {

bool PgSession::IsUniqueViolation(const std::exception& e) {
    return SqlState(e) == "23505";
}

std::optional<pricing::Error> PgSession::CallOnConnection(
    const std::function<void(pqxx::connection&)>& body) {
    try {
        if (!conn_ || !conn_->is_open()) {
            conn_ = Connect(url_);
        }
        body(*conn_);
        return std::nullopt;
    } catch (const std::exception& e) {
        const std::string state = SqlState(e);
        if (!conn_ || !conn_->is_open() ||
            dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
            state.rfind("57", 0) == 0 || state.rfind("08", 0) == 0) {
            conn_.reset();
            return pricing::MakeError(pricing::ErrorCode::kUnavailable,
                                      "the database is unreachable; retry later");
        }
        log::Error("database call failed", {{"error", e.what()}, {"sqlstate", state}});
        return pricing::MakeError(pricing::ErrorCode::kInternal, "database call failed");
    }
}

}  // namespace gpucost::storage
