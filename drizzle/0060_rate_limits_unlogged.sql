-- Request counts and sign-in lockouts are kept without the write-ahead log (issue #29): every API call
-- and model call counts itself here, and waiting for the WAL's flush made the count the slowest step
-- before a model call is forwarded. After a crash (or on a promoted standby, which never has an
-- unlogged table's rows) the counters start empty: a window's requests are counted afresh, a lockout
-- in progress is lifted. Nothing of money or identity is here.
ALTER TABLE "rate_limits" SET UNLOGGED;
