#pragma once
// The account-bind workload's domain: one row per bound OpenID in t_account, ideally. A request
// binds OpenID `key` to device `value` (the logical operation that first submitted it); its
// strategies (models/strategies/) write the table and its checkers (duplicate rows, lost
// updates) read it. Nothing here knows a strategy.

#include <cstdint>
#include <string>

#include "models/db/database.hpp"

namespace models::workloads::account_bind {

/// The row's values for a request's key and value (the value is the logical operation).
inline std::string open_id_of(std::uint64_t key) { return "openid:" + std::to_string(key); }
inline std::string device_of(std::uint64_t value) { return "device-" + std::to_string(value); }

/// The table every account-bind strategy writes: one row per bound OpenID, ideally.
inline const std::string kAccounts = "t_account";
/// t_account with the given index on open_id: (id, open_id, device, wallet, version, status).
db::TableSchema accounts_table(db::KeyIndex key_index);

}  // namespace models::workloads::account_bind
