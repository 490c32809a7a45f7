-- wrk script for bench/check.sh: every request is a POST of the same JSON body, read once from
-- the file named by the environment variable BODY (a /check request body). With BODY unset the
-- requests stay GETs (the nginx static-file baseline).
--
--   BODY=body.json wrk -t2 -c64 -d20s --latency -s bench/check_post.lua http://127.0.0.1:P/api/v1/check
--
-- No response() hook: defining one makes wrk hand every answer to Lua, which costs CPU on the
-- machine the servers share. wrk itself counts non-2xx/3xx answers and socket errors; the
-- answers' content is checked with curl before and after each run.

local path = os.getenv("BODY")
if path and path ~= "" then
    local f = assert(io.open(path, "rb"))
    wrk.body = f:read("*a")
    f:close()
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Accept"] = "application/json"
end
