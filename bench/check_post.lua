-- wrk script for bench/check.sh.
--
--   BODY=body.json wrk -t2 -c64 -d20s --latency -s bench/check_post.lua http://127.0.0.1:P/api/v1/check
--       every request is a POST of the same JSON body, read once from the file BODY;
--   DISTINCT=bodies.tsv wrk … -s bench/check_post.lua http://127.0.0.1:P/api/v1/check
--       every request is a POST of {"endpoint":E,"toolSetDigest":D,"nonce":N}, cycling through
--       the lines "E<TAB>D" of the file, with N counting per thread (thread number in the high
--       digits): no two requests of a run carry the same bytes, so no server can answer one from
--       an answer to another (toolmark caches answers by SHA-256 of the body for one second).
--       Neither toolmark nor HISTOR reads "nonce";
--   neither set: GETs (the nginx static-file baseline).
--
-- No response() hook: defining one makes wrk hand every answer to Lua, which costs CPU on the
-- machine the servers share. wrk itself counts non-2xx/3xx answers and socket errors; the
-- answers' content is checked with curl before and after the runs.

local threads = 0

function setup(thread)
    thread:set("number", threads)
    threads = threads + 1
end

local path = os.getenv("BODY")
local distinct = os.getenv("DISTINCT")
local pairs_ = {}
local n = 0

if distinct and distinct ~= "" then
    for line in io.lines(distinct) do
        local e, d = line:match("^([^\t]+)\t([^\t]+)$")
        if e then
            pairs_[#pairs_ + 1] = '{"endpoint":"' .. e .. '","toolSetDigest":"' .. d .. '","nonce":'
        end
    end
    assert(#pairs_ > 0, "no bodies in " .. distinct)
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Accept"] = "application/json"
    function request()
        n = n + 1
        local body = pairs_[(n % #pairs_) + 1] .. (number * 1000000000 + n) .. "}"
        return wrk.format(nil, nil, nil, body)
    end
elseif path and path ~= "" then
    local f = assert(io.open(path, "rb"))
    wrk.body = f:read("*a")
    f:close()
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Accept"] = "application/json"
end
