'use client';
// The REST API's reference, rendered from /api/v1/openapi.json by Swagger UI in the browser only (it
// reads `window`). It runs under the page's strict policy: its code is loaded by Next's nonce'd
// scripts ('strict-dynamic'), it evaluates no strings, styles come from the bundled stylesheet and
// style attributes, and it fetches the document from the portal itself.
import dynamic from 'next/dynamic';
import 'swagger-ui-react/swagger-ui.css';

const SwaggerUI = dynamic(() => import('swagger-ui-react'), { ssr: false });

export function ApiReference({ url, loading }: { url: string; loading: string }) {
  return (
    <div data-testid="api-reference" aria-busy="false">
      <noscript>{loading}</noscript>
      <SwaggerUI url={url} docExpansion="list" defaultModelsExpandDepth={0} deepLinking />
    </div>
  );
}
