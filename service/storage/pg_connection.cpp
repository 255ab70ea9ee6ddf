#include "service/storage/pg_connection.hpp"

namespace gpucost::storage {

std::string WithConnectionDefaults(const std::string& url) {
    const bool is_url = url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
    std::string out = url;
    auto add = [&](const std::string& key, const std::string& value) {
        if (out.find(key + "=") != std::string::npos) {
            return;
        }
        if (is_url) {
            out += (out.find('?') == std::string::npos ? "?" : "&") + key + "=" + value;
        } else {
            out += " " + key + "=" + value;
        }
    };
    add("connect_timeout", std::to_string(kConnectTimeoutS));
    add("keepalives", "1");
    add("keepalives_idle", "5");
    add("keepalives_interval", "2");
    add("keepalives_count", "3");
    add("tcp_user_timeout", "5000");
    add("application_name", "gpucost");
    return out;
}

std::string RedactUrl(const std::string& url) {
    std::string out = url;
    // URL form: scheme://user:password@host
    auto scheme = out.find("://");
    if (scheme != std::string::npos) {
        auto at = out.find('@', scheme + 3);
        auto colon = out.find(':', scheme + 3);
        if (at != std::string::npos && colon != std::string::npos && colon < at) {
            out.replace(colon + 1, at - colon - 1, "***");
        }
    }
    // key=value form
    auto pw = out.find("password=");
    if (pw != std::string::npos) {
        auto end = out.find_first_of(" &", pw);
        out.replace(pw + 9, (end == std::string::npos ? out.size() : end) - pw - 9, "***");
    }
    return out;
}

std::unique_ptr<pqxx::connection> Connect(const std::string& url) {
    auto conn = std::make_unique<pqxx::connection>(WithConnectionDefaults(url));
    pqxx::nontransaction tx(*conn);
    tx.exec("SET statement_timeout = " + std::to_string(kStatementTimeoutMs));
    tx.exec("SET TIME ZONE 'UTC'");
    return conn;
}

std::string SqlState(const std::exception& e) {
    if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
        return sql->sqlstate();
    }
    return {};
}

}  // namespace gpucost::storage
