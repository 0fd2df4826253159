// The OpenID provider the test suite runs: panva's certified `oidc-provider`, on 127.0.0.1.
//
// It replaces a human only at the login and consent pages (INTERACTIONS=auto logs in as the
// request's login_hint, or AUTO_LOGIN, and grants what was asked); everything else is the real
// provider: discovery, JWKS, dynamic registration, code + PKCE, resource indicators (RFC 8707),
// refresh, introspection (RFC 7662) and revocation (RFC 7009).
//
// Environment:
//   PORT                  listen port (0 = any; the port is printed in the ready line)
//   SCOPES                the MCP server's scopes, space-separated (tests/oidc.py: from the registry)
//   ACCESS_TOKEN_FORMAT   jwt (default) or opaque
//   ACCESS_TOKEN_TTL      seconds (default 3600)
//   ACCESS_TOKEN_TTL_MCP  seconds for resources whose URL ends in /mcp (default ACCESS_TOKEN_TTL), so
//                         tokens meant for Nextcloud can expire quickly while MCP clients' do not
//   EXTRA_AUDIENCES       comma-separated audiences added to JWT access tokens (aud becomes a list)
//   REFRESH_ALWAYS        1: refresh tokens without offline_access + prompt=consent
//   CLIENT_REDIRECT_URIS  redirect URIs of the static confidential client "mcp-server"
//   ROTATE_REFRESH        1: every refresh returns a new refresh token (the old one dies)
//   TEST_SIGNING          1: POST /test/sign {payload, header?} signs with the provider's RSA key,
//                         so tests can present well-signed tokens with chosen (bad) claims
//
// Prints one JSON line when ready: {"ready": true, "issuer": "http://127.0.0.1:<port>"}.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import Provider, { errors } from 'oidc-provider';
import { SignJWT, importJWK } from 'jose';

const env = process.env;
// The MCP server's scopes, from its toolsets' declarations (tests/oidc.py passes them).
const SCOPES = (env.SCOPES || '').split(' ').filter(Boolean);
if (SCOPES.length === 0) throw new Error('SCOPES (the MCP server\'s scopes, space-separated) is required');
const FORMAT = env.ACCESS_TOKEN_FORMAT || 'jwt';
const TTL = Number(env.ACCESS_TOKEN_TTL || 3600);
const TTL_MCP = Number(env.ACCESS_TOKEN_TTL_MCP || TTL);
const EXTRA_AUDIENCES = (env.EXTRA_AUDIENCES || '').split(',').filter(Boolean);
const REDIRECTS = (env.CLIENT_REDIRECT_URIS || 'http://127.0.0.1/callback').split(',').filter(Boolean);

const rsaKey = { ...crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'rsa-1', alg: 'RS256', use: 'sig' };
const ecKey = { ...crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: 'ec-1', alg: 'ES256', use: 'sig' };

const listener = http.createServer();
await new Promise((resolve) => listener.listen(Number(env.PORT || 0), '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${listener.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: [rsaKey, ecKey] },
  cookies: { keys: [crypto.randomBytes(16).toString('hex')] },
  clients: [{
    client_id: 'mcp-server',
    client_secret: 'mcp-server-secret',
    grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
    response_types: ['code'],
    redirect_uris: REDIRECTS,
    scope: ['openid', 'offline_access', 'profile', 'email', ...SCOPES].join(' '),
  }],
  scopes: ['openid', 'offline_access', 'profile', 'email', ...SCOPES],
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'] },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, name: id, preferred_username: id, email: `${id}@example.test`, email_verified: true };
      },
    };
  },
  responseTypes: ['code'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    introspection: { enabled: true, allowedPolicy: async () => true },
    revocation: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      async getResourceServerInfo(ctx, indicator) {
        if (!/^https?:\/\//.test(indicator)) throw new errors.InvalidTarget('resource must be an http(s) URL');
        return { scope: SCOPES.join(' '), audience: indicator, accessTokenTTL: indicator.endsWith('/mcp') ? TTL_MCP : TTL, accessTokenFormat: FORMAT, jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
  formats: {
    customizers: {
      async jwt(ctx, token, jwt) {
        if (EXTRA_AUDIENCES.length && token.kind === 'AccessToken') {
          jwt.payload.aud = [...[jwt.payload.aud].flat(), ...EXTRA_AUDIENCES];
        }
      },
    },
  },
  ...(env.REFRESH_ALWAYS === '1' ? { issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token') } : {}),
  ...(env.ROTATE_REFRESH === '1' ? { rotateRefreshToken: () => true } : {}),
  ttl: { AccessToken: (ctx, token) => token.resourceServer?.accessTokenTTL ?? TTL, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 86400, Interaction: 600, Session: 86400, Grant: 86400, ClientCredentials: 600 },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  renderError(ctx, out) { ctx.type = 'json'; ctx.body = out; },
});

// The only stand-in for a person: log in as login_hint (or AUTO_LOGIN) and consent to everything asked.
provider.use(async (ctx, next) => {
  const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
  if (!match || ctx.method !== 'GET') return next();
  const { prompt, params, session, grantId } = await provider.interactionDetails(ctx.req, ctx.res);
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: params.login_hint || env.AUTO_LOGIN || 'admin' } };
  } else {
    const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const details = prompt.details;
    if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
    if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
    for (const [indicator, scope] of Object.entries(details.missingResourceScopes || {})) grant.addResourceScope(indicator, scope.join(' '));
    result = { consent: { grantId: await grant.save() } };
  }
  ctx.status = 303;
  ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: prompt.name === 'consent' }));
});

if (env.TEST_SIGNING === '1') {
  const signingKey = await importJWK(rsaKey, 'RS256');
  provider.use(async (ctx, next) => {
    if (ctx.path !== '/test/sign' || ctx.method !== 'POST') return next();
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const { payload, header } = JSON.parse(Buffer.concat(chunks).toString() || '{}');
    ctx.type = 'json';
    ctx.body = { token: await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'rsa-1', typ: 'at+jwt', ...header }).sign(signingKey) };
  });
}

listener.on('request', provider.callback());
console.log(JSON.stringify({ ready: true, issuer, format: FORMAT }));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => listener.close(() => process.exit(0)));
