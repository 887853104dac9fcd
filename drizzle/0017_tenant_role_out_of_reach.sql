-- What a tenant read (role portal_tenant, drizzle/0009) may not read at all, whatever its filter:
-- password hashes, staff roles, notifications (they name people of other tenants' reviews), sessions
-- and rate-limit counters (addresses, browsers), the simulated cluster's internals and the centre's
-- own counters and samples. Tenant reads never need them; the portal's own connection still does.
REVOKE SELECT ON users FROM portal_tenant;
--> statement-breakpoint
GRANT SELECT (id, email, name, locale, created_at) ON users TO portal_tenant;
--> statement-breakpoint
REVOKE SELECT ON staff_roles, notifications, sessions, rate_limits, sim_cluster_state, sim_cluster_ops, sim_cluster_snapshots, sim_finished_jobs, document_counters, cluster_samples FROM portal_tenant;
--> statement-breakpoint
-- New tables are no longer readable by tenant reads by default: a migration that adds a tenant-owned
-- table grants SELECT and adds its policy explicitly (forgetting it fails closed: permission denied).
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE SELECT ON TABLES FROM portal_tenant;
