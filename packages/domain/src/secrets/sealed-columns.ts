/**
 * Every column that holds a secret sealed with SECRETS_KEY (packages/core/src/secret-box.ts),
 * by table, with the name `secrets reseal` counts it under. A new sealed column belongs here,
 * or a key rotation would leave it behind, sealed under a key about to be dropped.
 */
const SEALED_COLUMNS = {
  webhook_endpoints: {
    signing_secret_sealed: 'signing_secrets',
    previous_signing_secret_sealed: 'previous_signing_secrets',
  },
  processor_connections: {
    webhook_secret_sealed: 'processor_webhook_secrets',
    api_key_sealed: 'processor_api_keys',
  },
} as const;

export type SealedTable = keyof typeof SEALED_COLUMNS;

/** What a sealed column holds, as `secrets reseal` reports it. */
export type SecretKind = {
  [T in SealedTable]: (typeof SEALED_COLUMNS)[T][keyof (typeof SEALED_COLUMNS)[T]];
}[SealedTable];

export const SEALED_TABLES = Object.keys(SEALED_COLUMNS) as SealedTable[];

export function sealedColumnsOf(table: SealedTable): Array<{ column: string; kind: SecretKind }> {
  return Object.entries(SEALED_COLUMNS[table]).map(([column, kind]) => ({ column, kind }));
}
