-- strategies/select-for-update.lua with handle(req), on the bind-openid workload.
workload = "bind-openid"
description = "BEGIN; SELECT ... FOR UPDATE; INSERT if absent; COMMIT (plain index)"

function handle(req)
  local open_id, device = "openid:" .. req.key, "device-" .. req.device
  db.begin()
  if #db.query("SELECT id FROM t_binding WHERE open_id = ? FOR UPDATE", open_id) == 0 then
    db.exec("INSERT INTO t_binding (open_id, device) VALUES (?, ?)", open_id, device)
  end
  db.commit()
end
