// Lua scripts of RedisWeightGate (see redis-weight-gate.ts for the data layout).
//
// Every time is Redis TIME in integer microseconds (an epoch in µs is ~1.8e15, exact in a Lua
// double), so one clock serves all machines and scores compare exactly. Numbers go back to the
// client as strings where they may be fractional or large: Redis truncates Lua numbers to integers.

/** Shared helpers, prepended to each script. */
const PRELUDE = `
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function fmt(x) return string.format('%.0f', x) end
local function weight(member) return tonumber(string.match(member, ':([^:]*)$')) or 0 end
-- The running sum of a budget's charges (KEYS "<K>:sum") lives exactly as long as its sorted set.
local function store_sum(zkey, skey, sum)
  local p = redis.call('PTTL', zkey)
  if p == -2 or sum <= 0 then redis.call('DEL', skey)
  elseif p == -1 then redis.call('SET', skey, string.format('%.17g', sum))
  else redis.call('SET', skey, string.format('%.17g', sum), 'PX', p) end
end
-- A budget's weight charged inside the window at \`now\`, its expired charges dropped, and whether
-- the stored running sum no longer says it. A check costs the charges expired since the last one,
-- not the whole window (thousands of charges under a large budget made every check a full scan).
local function current_sum(zkey, skey, now, window)
  local cutoff = fmt(now - window)
  local stored = redis.call('GET', skey)
  local sum = 0
  local stale = false
  if stored then
    sum = tonumber(stored)
    local expired = redis.call('ZRANGEBYSCORE', zkey, '-inf', cutoff)
    if #expired > 0 then
      for _, m in ipairs(expired) do sum = sum - weight(m) end
      redis.call('ZREMRANGEBYSCORE', zkey, '-inf', cutoff)
      stale = true
    end
  else
    -- No running sum yet (an idle budget, or charges written before it existed): count once.
    redis.call('ZREMRANGEBYSCORE', zkey, '-inf', cutoff)
    for _, m in ipairs(redis.call('ZRANGE', zkey, 0, -1)) do sum = sum + weight(m) end
    stale = sum > 0
  end
  if sum < 0 or (sum > 0 and redis.call('ZCARD', zkey) == 0) then
    sum = 0
    stale = true
  end
  return sum, stale
end
-- A budget's allowance (allowance.ts), stored in hash "<K>:allow": v value, t threshold, c last
-- cut (µs). Absent: the configured budget, never cut.
local function allowance(akey, limit)
  local a = redis.call('HMGET', akey, 'v', 't', 'c')
  local v = tonumber(a[1]) or limit
  if v > limit then v = limit end
  return v, tonumber(a[2]) or limit, tonumber(a[3]) or -1
end
local function num(x) return string.format('%.17g', x) end
`;

/**
 * Check-and-charge both budgets atomically, or report how long to wait; mode "peek" only reports.
 *
 * KEYS: 1 ip zset, 2 uid zset, 3 ip pause, 4 uid pause, 5 ip sum, 6 uid sum, 7 ip allow, 8 uid allow
 * ARGV: 1 mode ("charge" | "peek"), 2 windowMs, 3 maxInFlightMs, 4 ip limit, 5 uid limit,
 *       6 ip member, 7 uid member (each "<id>:<weight>"), 8 ip cost, 9 uid cost, 10 key TTL ms
 * Returns: { granted 0|1, wait ms (integer, 0 when granted), used ip, used uid, now µs,
 *   allowance ip, allowance uid }
 *   "used" includes the new charge when granted. The wait is exact when the budget frees up by
 *   settled charges expiring or the pause ending; when it needs an in-flight charge it is the lower
 *   bound windowMs (that charge, settled at the earliest right now, still counts for a window).
 */
export const CHARGE_SCRIPT = `${PRELUDE}
local now = now_us()
local window = tonumber(ARGV[2]) * 1000
local in_flight = tonumber(ARGV[3]) * 1000
local limits = { tonumber(ARGV[4]), tonumber(ARGV[5]) }
local members = { ARGV[6], ARGV[7] }
local costs = { tonumber(ARGV[8]), tonumber(ARGV[9]) }
local charge = ARGV[1] == 'charge'

local wait = 0
for i = 3, 4 do
  local p = redis.call('PTTL', KEYS[i])
  if p > wait then wait = p end
end

local used = { 0, 0 }
local stale = { false, false } -- the stored sum no longer says used[i]
local allowances = { 0, 0 }
for i = 1, 2 do
  -- A charge counts while at + window > now. A request must fit the budget's allowance (a
  -- request heavier than it still goes alone, or it would never go).
  used[i], stale[i] = current_sum(KEYS[i], KEYS[i + 4], now, window)
  allowances[i] = allowance(KEYS[i + 6], limits[i])
  local allowed = allowances[i]
  if allowed < costs[i] then allowed = costs[i] end
  local need = used[i] + costs[i] - allowed
  if charge and need > 0 then
    -- Over budget (then the window holds at most a budget's worth of charges): free charges in
    -- expiry order (ascending score) until the cost fits.
    local all = redis.call('ZRANGE', KEYS[i], 0, -1, 'WITHSCORES')
    local w_us = window
    local freed = 0
    for j = 1, #all, 2 do
      freed = freed + weight(all[j])
      if freed >= need then
        local at = tonumber(all[j + 1])
        if at <= now then w_us = at + window - now end
        break
      end
    end
    local w_ms = math.ceil(w_us / 1000)
    if w_ms < 1 then w_ms = 1 end
    if w_ms > wait then wait = w_ms end
  end
end

if not charge or wait > 0 then
  -- A waiter polls while the budget is full: write the sum only when this check changed it.
  for i = 1, 2 do if stale[i] then store_sum(KEYS[i], KEYS[i + 4], used[i]) end end
  return { 0, wait, tostring(used[1]), tostring(used[2]), fmt(now), num(allowances[1]), num(allowances[2]) }
end

local at = fmt(now + in_flight)
local ttl = tonumber(ARGV[10])
for i = 1, 2 do
  if costs[i] > 0 then
    redis.call('ZADD', KEYS[i], at, members[i])
    used[i] = used[i] + costs[i]
  end
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
  store_sum(KEYS[i], KEYS[i + 4], used[i])
end
return { 1, 0, tostring(used[1]), tostring(used[2]), fmt(now), num(allowances[1]), num(allowances[2]) }
`;

/**
 * The request finished: move the charge's "at" to now plus the time the request may still take to
 * reach the exchange (0 when it was answered); it then counts for one more window. Each key lives at
 * least as long as that charge counts.
 * KEYS: 1 ip zset, 2 uid zset, 3 ip sum, 4 uid sum, 5 ip allow, 6 uid allow. ARGV: 1 ip member,
 * 2 uid member, 3 may-still-arrive ms, 4 key TTL ms, 5 ip limit, 6 uid limit, 7 growth,
 * 8 allowance memory ms. The sum is unchanged (the charge stays); its key keeps the set's lifetime.
 * Answered (may-still-arrive 0), the allowance grows as allowance.ts says.
 * A charge Redis no longer has (forgotten in a failover or a restart, see redis-reconnections.ts)
 * is put back: its request was sent. (A released charge is never settled; one that expired, past
 * the request timeout plus a window, comes back for one window: the safe side.)
 */
export const SETTLE_SCRIPT = `${PRELUDE}
local delay = tonumber(ARGV[3])
local at = fmt(now_us() + delay * 1000)
local ttl = tonumber(ARGV[4])
for i = 1, 2 do
  local w = weight(ARGV[i])
  if w > 0 then
    local had = redis.call('ZSCORE', KEYS[i], ARGV[i])
    redis.call('ZADD', KEYS[i], at, ARGV[i])
    if redis.call('PTTL', KEYS[i]) < ttl then
      redis.call('PEXPIRE', KEYS[i], ttl)
      if redis.call('PTTL', KEYS[i + 2]) > 0 then redis.call('PEXPIRE', KEYS[i + 2], ttl) end
    end
    -- Forgotten by Redis (a failover or restart since the charge): put it back, and its weight in
    -- the running sum (an absent sum is recounted from the set at the next check).
    local stored = redis.call('GET', KEYS[i + 2])
    if not had and stored then store_sum(KEYS[i], KEYS[i + 2], tonumber(stored) + w) end
  end
  -- Answered: the exchange had room for it, so the allowance grows (nothing to write at the budget).
  local limit = tonumber(ARGV[4 + i])
  local v, t = allowance(KEYS[i + 4], limit)
  if delay <= 0 and v < limit then
    local w = weight(ARGV[i])
    local step = w
    if v >= t then step = tonumber(ARGV[7]) * w end
    v = math.min(limit, v + step)
    redis.call('HSET', KEYS[i + 4], 'v', num(v), 't', num(t))
    redis.call('PEXPIRE', KEYS[i + 4], tonumber(ARGV[8]))
  end
end
return 1
`;

/**
 * Hands back charges whose requests were never sent: removes them and their weight from the sum.
 * KEYS: 1 ip zset, 2 uid zset, 3 ip sum, 4 uid sum. ARGV: 1 ip member, 2 uid member.
 */
export const RELEASE_SCRIPT = `${PRELUDE}
for i = 1, 2 do
  if redis.call('ZREM', KEYS[i], ARGV[i]) == 1 then
    local stored = redis.call('GET', KEYS[i + 2])
    if stored then store_sum(KEYS[i], KEYS[i + 2], tonumber(stored) - weight(ARGV[i])) end
  end
end
return 1
`;

/**
 * Hold everything back for ARGV[1] ms on every pause key; never shortens a longer pause.
 * KEYS: pause keys.
 */
export const PAUSE_SCRIPT = `
local d = tonumber(ARGV[1])
for i = 1, #KEYS do
  local p = redis.call('PTTL', KEYS[i])
  if p < d then redis.call('SET', KEYS[i], '1', 'PX', d) end
end
return 1
`;

/**
 * The exchange refused a request as too many: its charge is settled now and stays (exchanges count
 * refused requests), marked refused; the allowance of the budget to blame is cut from the weight
 * granted in the window, once per crowding (a request
 * sent before the last cut changes nothing), as allowance.ts says; every process pauses.
 * KEYS: 1 ip zset, 2 uid zset, 3 ip sum, 4 uid sum, 5 ip allow, 6 uid allow, 7 ip pause, 8 uid pause
 * ARGV: 1 ip member, 2 uid member, 3 windowMs, 4 ip limit, 5 uid limit, 6 sent at (µs), 7 pause ms,
 *       8 key TTL ms, 9 decrease, 10 floor, 11 allowance memory ms
 * Returns: { blamed budget 1 ip | 2 uid, cut 0|1, allowance after (string) }
 */
export const REFUSE_SCRIPT = `${PRELUDE}
local now = now_us()
local window = tonumber(ARGV[3]) * 1000
local limits = { tonumber(ARGV[4]), tonumber(ARGV[5]) }
local ttl = tonumber(ARGV[8])
local granted = { 0, 0 }
for i = 1, 2 do
  -- The charge stays, renamed "<id>!:<weight>": counted, but known as not granted.
  if redis.call('ZREM', KEYS[i], ARGV[i]) == 1 then
    local refused = string.gsub(ARGV[i], ':([^:]*)$', '!:%1')
    redis.call('ZADD', KEYS[i], fmt(now), refused)
    if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
  local used, stale = current_sum(KEYS[i], KEYS[i + 2], now, window)
  if stale then store_sum(KEYS[i], KEYS[i + 2], used) end
  granted[i] = used
  for _, m in ipairs(redis.call('ZRANGE', KEYS[i], 0, -1)) do
    if string.find(m, '!:', 1, true) then granted[i] = granted[i] - weight(m) end
  end
end
local b = 2
if granted[1] / limits[1] > granted[2] / limits[2] then b = 1 end
local v, t, c = allowance(KEYS[b + 4], limits[b])
local cut = 0
if tonumber(ARGV[6]) > c then
  local decrease = tonumber(ARGV[9])
  local nv = math.max(math.max(1, tonumber(ARGV[10]) * limits[b]), decrease * math.min(v, granted[b]))
  -- The first cut this budget learns of keeps a quick climb back (allowance.ts says why).
  if c < 0 then t = math.max(nv, decrease * v) else t = nv end
  v = nv
  redis.call('HSET', KEYS[b + 4], 'v', num(v), 't', num(t), 'c', fmt(now))
  redis.call('PEXPIRE', KEYS[b + 4], tonumber(ARGV[11]))
  cut = 1
end
local d = tonumber(ARGV[7])
for i = 7, 8 do
  if redis.call('PTTL', KEYS[i]) < d then redis.call('SET', KEYS[i], '1', 'PX', d) end
end
return { b, cut, num(v) }
`;
