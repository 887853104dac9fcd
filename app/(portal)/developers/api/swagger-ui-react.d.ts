// swagger-ui-react ships no types; the props this page passes.
declare module 'swagger-ui-react' {
  import type { ComponentType } from 'react';
  interface SwaggerUIProps {
    url?: string;
    docExpansion?: 'list' | 'full' | 'none';
    defaultModelsExpandDepth?: number;
    tryItOutEnabled?: boolean;
    persistAuthorization?: boolean;
    deepLinking?: boolean;
  }
  const SwaggerUI: ComponentType<SwaggerUIProps>;
  export default SwaggerUI;
}
