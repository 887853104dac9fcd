-- Login roles that cannot escape (issue #31). Tenant calls switched to portal_tenant on the portal's own
-- connection; a `RESET ROLE` slipped into such a transaction went back to the portal's login, which passes
-- the service policy and reads every tenant. With the authenticator pattern the tenant calls log in as a
-- role that has no table rights of its own and may only become portal_tenant (NOINHERIT: it does not
-- use portal_tenant's rights until it switches), so a RESET ROLE leaves it with nothing. The portal's own
-- connection (staff, the worker, what follows a commit) keeps its login (DATABASE_URL).
-- A centre names its own login in DATABASE_TENANT_URL: this creates `portal_authenticator` (NOLOGIN, without
-- a password) when it is missing and lets it become portal_tenant; an operator gives it LOGIN and a password,
-- or grants portal_tenant to a login role of their own, NOINHERIT (docs/deploy.md).
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'portal_authenticator') THEN
    CREATE ROLE portal_authenticator NOLOGIN NOINHERIT NOBYPASSRLS;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- created meanwhile by another migration of the same cluster
END
$$;
--> statement-breakpoint
GRANT portal_tenant TO portal_authenticator;
--> statement-breakpoint
DO $$
BEGIN
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO portal_authenticator', current_database());
END
$$;
