#pragma once
// The registry entry of each strategy of this folder, one per file. The strategies a workload
// keeps in its own folder (models/workloads/<kind>/) are declared where the registry lists them.

#include "models/strategies/strategy.hpp"

namespace models::strategies {

Entry check_then_insert();
Entry unique_index();
Entry insert_catch_reselect();
/// Its handler, shared by request-token (the same code on a key issued before the operation).
std::unique_ptr<Strategy> make_insert_catch_reselect(Env& env, const Params& params);
Entry insert_ignore_reselect();
Entry upsert();
Entry replace_into();
Entry insert_where_not_exists();
Entry select_for_update();
Entry status_cas();
Entry version_cas();
Entry db_lock_table();
Entry local_mutex();
Entry redis_set_nx_ex_drop();
Entry redis_token_cas_unlock();
/// Its handler, shared by lock-plus-unique-index (a 1062 behind the lock means done).
std::unique_ptr<Strategy> make_redis_token_lock(Env& env, const Params& params, bool duplicate_is_done);
Entry redis_setnx_no_expiry();
/// Its handler, shared by redis-setnx-then-expire (EXPIRE as a second command).
std::unique_ptr<Strategy> make_redis_setnx(Env& env, const Params& params, bool then_expire);
Entry redis_setnx_then_expire();
Entry redis_lock_double_check();
Entry redis_retry_lock();
Entry redis_retry_lock_requery();
Entry redisson_watchdog();
Entry redlock();
Entry zookeeper_recipe();
Entry zookeeper_herd();
Entry zookeeper_recipe_checked();
Entry fencing_token();
Entry etcd_lease_revision();
Entry consul_lock();
Entry consul_lock_index();
Entry request_token();
Entry rate_limit();
Entry lock_plus_unique_index();
Entry create_inside_txn();
Entry create_then_txn();

}  // namespace models::strategies
