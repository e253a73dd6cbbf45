#include "models/workloads/account_bind/accounts.hpp"

namespace models::workloads::account_bind {

db::TableSchema accounts_table(db::KeyIndex key_index) {
  return {.name = kAccounts,
          .key_column = "open_id",
          .key_index = key_index,
          .columns = {{"device", std::string()},
                      {"wallet", std::int64_t{0}},
                      {"version", std::int64_t{0}},
                      {"status", std::int64_t{0}}}};
}

}  // namespace models::workloads::account_bind
