// Links to files in project workspaces (the download route streams them with Range; a folder as a tar).

/** downloadHref is the download address of a file or folder of a project's workspace at a site. */
export function downloadHref(projectId: string, site: string, path: string): string {
  return `/api/projects/${encodeURIComponent(projectId)}/files/download?site=${encodeURIComponent(site)}&path=${encodeURIComponent(path)}`;
}

/** joinPath joins workspace path names ('' is the workspace itself). */
export function joinPath(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('/');
}
