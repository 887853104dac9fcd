-- hand-written:
-- What a tenant's own transaction may set on its applications (issue #32). The tenant role updates its
-- applications (drafts, submissions), and a submission records the round of a call it joins; the worker
-- records when a report was asked for. A statement of the tenant's that set another round — a closed one,
-- one of another access mode — or the report's request time would have gone through: the database now
-- refuses both. The service's own connection (staff, the worker) is not bound by this.
CREATE FUNCTION applications_tenant_guard() RETURNS trigger LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  IF current_user <> 'portal_tenant' THEN
    RETURN NEW;
  END IF;
  IF NEW.report_requested_at IS DISTINCT FROM OLD.report_requested_at THEN
    RAISE EXCEPTION 'a tenant does not set when its report was asked for' USING ERRCODE = '42501';
  END IF;
  IF NEW.round_id IS DISTINCT FROM OLD.round_id AND NEW.round_id IS NOT NULL AND NOT (
    NEW.status = 'submitted' AND EXISTS (
      SELECT 1 FROM call_rounds r JOIN calls c ON c.id = r.call_id
      WHERE r.id = NEW.round_id AND r.status = 'open' AND c.access_mode_id = NEW.access_mode_id
    )
  ) THEN
    RAISE EXCEPTION 'an application joins only an open round of its access mode, when submitted' USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER applications_tenant_guard BEFORE UPDATE ON applications FOR EACH ROW EXECUTE FUNCTION applications_tenant_guard();
