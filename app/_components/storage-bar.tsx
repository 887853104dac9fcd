// A workspace's storage against its quota (issue #27): a bar of the share used, amber from the 80 % alert on
// and red at 100 %, with a tick at 80 % where the first alert goes out. Server-safe, no client code.

/** The share at which the project's leads and the tenant's owners are first told (server/core/usage/storage.ts). */
const ALERT_PERCENT = 80;

export function StorageBar({ usedBytes, grantedGb, label, markLabel }: { usedBytes: number; grantedGb: number; label: string; markLabel: string }) {
  const granted = grantedGb * 1_000_000_000;
  const share = granted > 0 ? (usedBytes / granted) * 100 : usedBytes > 0 ? 100 : 0;
  const fill = share >= 100 ? 'bg-red-600' : share >= ALERT_PERCENT ? 'bg-amber-500' : 'bg-sky-600';
  return (
    <div className="relative" role="img" aria-label={label}>
      <div className="flex h-2.5 w-full overflow-hidden rounded-full bg-slate-100">
        <div className={fill} style={{ width: `${Math.min(100, share).toFixed(1)}%` }} />
      </div>
      {/* The 80 % mark: a thin line across the bar, named for those who hover it. */}
      <div className="absolute -top-0.5 h-3.5 w-0.5 bg-slate-500" style={{ left: `${ALERT_PERCENT}%` }} title={markLabel} aria-hidden="true" />
    </div>
  );
}
