/**
 * THE secret-detection rules of POST /api/v1/transform/detect, as data (the way secret
 * scanners such as gitleaks keep theirs): an id, what it finds, a severity and a pattern;
 * `group` names the capture that is the secret (default: the whole match). The high-entropy
 * rule after them is a threshold, not a pattern. To add a rule, add a row here: the scanner
 * (detect.ts) and the documentation (docs/api.md) read this list.
 */
interface SecretRule {
  readonly id: string;
  readonly description: string;
  readonly severity: 'critical' | 'high' | 'medium';
  readonly pattern: RegExp;
  readonly group?: number;
}

export const SECRET_RULES: readonly SecretRule[] = [
  {
    id: 'private-key',
    description: 'a PEM private key (PKCS#1, PKCS#8, SEC1, OpenSSH, PGP)',
    severity: 'critical',
    pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{16,}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g,
  },
  {
    id: 'aws-access-key-id',
    description: 'an AWS access key id (long-term AKIA, temporary ASIA, and other AWS key prefixes)',
    severity: 'high',
    pattern: /\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b/g,
    group: 1,
  },
  {
    id: 'aws-secret-access-key',
    description: 'an AWS secret access key next to a name that says so',
    severity: 'critical',
    pattern: /aws.{0,20}?(?:secret|private).{0,20}?['"=:\s]{1,5}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    group: 1,
  },
  { id: 'github-pat', description: 'a GitHub personal access token (classic)', severity: 'high', pattern: /\bghp_[0-9A-Za-z]{36}\b/g },
  { id: 'github-fine-grained-pat', description: 'a GitHub fine-grained personal access token', severity: 'high', pattern: /\bgithub_pat_\w{82}\b/g },
  { id: 'github-oauth', description: 'a GitHub OAuth access token', severity: 'high', pattern: /\bgho_[0-9A-Za-z]{36}\b/g },
  {
    id: 'github-app-token',
    description: 'a GitHub App user-to-server or server-to-server token',
    severity: 'high',
    pattern: /\bgh[us]_[0-9A-Za-z]{36}\b/g,
  },
  { id: 'github-refresh-token', description: 'a GitHub refresh token', severity: 'high', pattern: /\bghr_[0-9A-Za-z]{36}\b/g },
  { id: 'gitlab-pat', description: 'a GitLab personal access token', severity: 'high', pattern: /\bglpat-[0-9A-Za-z_-]{20}\b/g },
  {
    id: 'slack-token',
    description: 'a Slack bot, user, app or configuration token',
    severity: 'high',
    pattern: /\bxox[abposre]-[0-9A-Za-z-]{10,250}\b/g,
  },
  {
    id: 'slack-webhook-url',
    description: 'a Slack incoming-webhook URL',
    severity: 'high',
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{43,56}/g,
  },
  {
    id: 'stripe-key',
    description: 'a Stripe secret or restricted key',
    severity: 'critical',
    pattern: /\b(?:sk|rk)_(?:test|live|prod)_[0-9A-Za-z]{10,99}\b/g,
  },
  { id: 'google-api-key', description: 'a Google API key', severity: 'high', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { id: 'npm-token', description: 'an npm access token', severity: 'high', pattern: /\bnpm_[0-9A-Za-z]{36}\b/g },
  { id: 'secrets-api-key', description: 'an API key of this service', severity: 'critical', pattern: /\bscm_[a-z2-7]{8}_[A-Za-z0-9_-]{43}/g },
  {
    id: 'jwt',
    description: 'a JSON Web Token (a bearer credential while valid)',
    severity: 'medium',
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  },
];

/**
 * Strings of 20+ token characters whose Shannon entropy per character is at least the
 * threshold of their alphabet (hex strings carry at most 4 bits a character, base64 6) and
 * that no rule above matched: likely generated keys or passwords.
 */
export const HIGH_ENTROPY = {
  id: 'high-entropy-string',
  description: 'a long random-looking string (likely a generated key, token or password)',
  severity: 'medium' as const,
  token: /[A-Za-z0-9+/=_-]{20,}/g,
  minBits: { hex: 3.0, base64: 4.2 },
};
