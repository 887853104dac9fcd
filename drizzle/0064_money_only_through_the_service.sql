ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_amount_ck" CHECK (("ledger_entries"."kind" = 'adjust' and "ledger_entries"."amount" <> 0) or ("ledger_entries"."kind" = 'charge' and "ledger_entries"."amount" >= 0) or "ledger_entries"."amount" > 0);--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_overrun_ck" CHECK ("ledger_entries"."overrun" = 0 or ("ledger_entries"."kind" = 'charge' and "ledger_entries"."overrun" between 0 and "ledger_entries"."amount"));--> statement-breakpoint
-- hand-written:
-- Money only through the service (issue #31). The tenant role (portal_tenant, a tenant's call) could raise
-- its own allocation's `granted` and append `grant` or `refund` rows; only the service code kept budgets
-- right, so one injected or careless statement would have minted GPU-hours. Now the database holds it:
-- 1. An allocation's cached balance (granted, charged, reserved, expired, overrun) is the sum of its ledger,
--    kept by a row trigger on ledger_entries (ledger_applied): whoever appends a row moves the
--    balance, in the same statement, and nobody writes those columns otherwise (the CHECKs above and
--    allocations_balance_ck decide what may be appended). The function runs as its owner, so the tenant
--    role needs no right on those columns.
-- 2. The tenant role appends only `reserve` rows (a submission, a session's extension): positive, no
--    overrun, on its own allocation (tenant_insert's WITH CHECK on the kind). Releases, charges, grants,
--    adjustments, refunds and write-offs are the service's (the worker, staff, what follows a commit).
-- 3. It updates no column of an allocation but the notices already sent (`noticed_permille`; a row lock of
--    the lock order needs one), and inserts none: instant approvals and the pay-as-you-go start run on the
--    service connection after the tenant's transaction (server/services/ledger/applications.ts,
--    billing/billing.ts), audited as before. The in-flight counters' trigger runs as its owner for the same reason.
CREATE FUNCTION ledger_applied() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  -- One row's effect on its allocation (the services hold the row locked already: they lock before appending).
  -- A row trigger: appends are one to three rows of one allocation, and a row's update is cheaper than a statement's aggregate.
  UPDATE allocations a
  SET granted = a.granted + CASE WHEN NEW.kind IN ('grant', 'adjust') THEN NEW.amount ELSE 0 END,
      charged = a.charged + CASE NEW.kind WHEN 'charge' THEN NEW.amount WHEN 'refund' THEN -NEW.amount ELSE 0 END,
      reserved = a.reserved + CASE NEW.kind WHEN 'reserve' THEN NEW.amount WHEN 'release' THEN -NEW.amount ELSE 0 END,
      expired = a.expired + CASE WHEN NEW.kind = 'expire' THEN NEW.amount ELSE 0 END,
      overrun = a.overrun + CASE WHEN NEW.kind = 'charge' THEN NEW.overrun ELSE 0 END
  WHERE a.id = NEW.allocation_id;
  RETURN NULL;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION ledger_applied() FROM PUBLIC;
--> statement-breakpoint
CREATE TRIGGER ledger_applied AFTER INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_applied();
--> statement-breakpoint
-- The cached balances as the ledger sums them (they were kept so by the service code; this makes it so if one was not).
UPDATE allocations a
SET granted = s.granted, charged = s.charged, reserved = s.reserved, expired = s.expired, overrun = s.overrun
FROM (SELECT al.id,
             coalesce(sum(l.amount) FILTER (WHERE l.kind IN ('grant', 'adjust')), 0) AS granted,
             coalesce(sum(l.amount) FILTER (WHERE l.kind = 'charge'), 0) - coalesce(sum(l.amount) FILTER (WHERE l.kind = 'refund'), 0) AS charged,
             coalesce(sum(l.amount) FILTER (WHERE l.kind = 'reserve'), 0) - coalesce(sum(l.amount) FILTER (WHERE l.kind = 'release'), 0) AS reserved,
             coalesce(sum(l.amount) FILTER (WHERE l.kind = 'expire'), 0) AS expired,
             coalesce(sum(l.overrun) FILTER (WHERE l.kind = 'charge'), 0) AS overrun
      FROM allocations al LEFT JOIN ledger_entries l ON l.allocation_id = al.id GROUP BY al.id) s
WHERE a.id = s.id AND (a.granted, a.charged, a.reserved, a.expired, a.overrun) IS DISTINCT FROM (s.granted, s.charged, s.reserved, s.expired, s.overrun);
--> statement-breakpoint
ALTER POLICY tenant_insert ON ledger_entries WITH CHECK (kind = 'reserve' AND amount > 0 AND overrun = 0 AND allocation_id IN (SELECT id FROM allocations));
--> statement-breakpoint
REVOKE INSERT, UPDATE ON allocations FROM portal_tenant;
--> statement-breakpoint
GRANT UPDATE (noticed_permille) ON allocations TO portal_tenant;
--> statement-breakpoint
DROP POLICY tenant_insert ON allocations;
--> statement-breakpoint
ALTER FUNCTION jobs_in_flight_changed() SECURITY DEFINER SET search_path = public, pg_temp;
--> statement-breakpoint
REVOKE ALL ON FUNCTION allocations_add_in_flight(uuid[], bigint[], integer[]) FROM PUBLIC;
--> statement-breakpoint
-- The price list is accepted on the service connection now (the starting credit line is a grant).
REVOKE UPDATE (price_list_accepted_at, price_list_accepted_by) ON organisations FROM portal_tenant;
