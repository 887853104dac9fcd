// How to call a model behind the gateway (issue #29): a service's page and the Models page show the same snippets.

/** How to call a service: curl and Python (the official `openai` client), with the token from the environment. */
export function ServiceSnippets({ endpointUrl, model }: { endpointUrl: string; model: string }) {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] });
  const curl = `curl ${endpointUrl}/chat/completions \\\n  -H "Authorization: Bearer $PORTAL_TOKEN" \\\n  -H "Content-Type: application/json" \\\n  -d '${body.replace(/'/g, `'\\''`)}'`;
  const python = [
    'import os',
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url=${JSON.stringify(endpointUrl)}, api_key=os.environ["PORTAL_TOKEN"])`,
    `answer = client.chat.completions.create(model=${JSON.stringify(model)}, messages=[{"role": "user", "content": "Hello"}])`,
    'print(answer.choices[0].message.content)',
  ].join('\n');
  return (
    <div className="mt-3 grid gap-3 lg:grid-cols-2">
      <pre className="overflow-x-auto rounded bg-slate-900 p-3 text-xs text-slate-100" data-testid="service-curl" tabIndex={0}>
        {curl}
      </pre>
      <pre className="overflow-x-auto rounded bg-slate-900 p-3 text-xs text-slate-100" data-testid="service-python" tabIndex={0}>
        {python}
      </pre>
    </div>
  );
}
