import { Type } from '@sinclair/typebox';

export const DnsRecord = Type.Object({
  type: Type.Union([Type.Literal('TXT'), Type.Literal('MX')]),
  name: Type.String(),
  value: Type.String(),
  priority: Type.Optional(Type.Integer()),
  purpose: Type.Union([Type.Literal('dkim'), Type.Literal('return_path'), Type.Literal('spf'), Type.Literal('dmarc'), Type.Literal('inbound')]),
  required: Type.Boolean(),
  verified: Type.Boolean(),
  selector: Type.Optional(Type.String({ description: "a DKIM record's key selector" })),
});

export const DkimKey = Type.Object(
  {
    id: Type.Integer(),
    selector: Type.String(),
    algorithm: Type.Union([Type.Literal('rsa-sha256'), Type.Literal('ed25519-sha256')]),
    status: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('retiring'), Type.Literal('retired')], {
      description:
        'pending: publish its record, then verify; active: signs; retiring: replaced by a rotation, no longer signs, stays published until retire_after; retired: its record may be removed',
    }),
    record: Type.Object({ type: Type.Literal('TXT'), name: Type.String(), value: Type.String() }),
    replaces_key_id: Type.Union([Type.Integer(), Type.Null()], { description: 'a rotation: the key this one retires once verified' }),
    created_at: Type.String(),
    verified_at: Type.Union([Type.String(), Type.Null()]),
    retire_after: Type.Union([Type.String(), Type.Null()]),
    retired_at: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'DkimKey' },
);

const AlgorithmInput = Type.Union([Type.Literal('rsa'), Type.Literal('ed25519'), Type.Literal('rsa-sha256'), Type.Literal('ed25519-sha256')]);

export const AddKeyBody = Type.Object({ algorithm: AlgorithmInput }, { additionalProperties: false });

export const RotateKeyBody = Type.Object(
  {
    algorithm: Type.Optional(AlgorithmInput),
    overlap_days: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 365, description: 'how long the replaced key stays published after the new one verifies (default 7)' }),
    ),
  },
  { additionalProperties: false },
);

export const Domain = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified')]),
    verified_by: Type.Union([Type.Literal('dns'), Type.Literal('sandbox'), Type.Literal('override'), Type.Null()], {
      description:
        'dns: the published records matched; sandbox: a .test domain, whose records count as published in sandbox mode only; override: marked verified without checks',
    }),
    selector: Type.String(),
    records: Type.Array(DnsRecord),
    keys: Type.Array(Type.Ref('DkimKey')),
    problems: Type.Array(Type.String(), { description: 'why records did not match at the last verification' }),
    open_tracking: Type.Boolean(),
    click_tracking: Type.Boolean(),
    pool: Type.Union([Type.String(), Type.Null()], {
      description:
        "the sending pool (a name of the server's delivery.pools) its mail goes from; null: the workspace's pool, else the stream's, else every source address",
    }),
    inbound: Type.Boolean({ description: 'receives mail for its routes (its `inbound` MX record is then required)' }),
    return_path_domain: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    verified_at: Type.Union([Type.String(), Type.Null()]),
    warnings: Type.Optional(
      Type.Array(Type.Object({ code: Type.String(), message: Type.String(), at: Type.String() }), {
        description:
          'GET /domains/{id} only: what receivers said about this domain as a sender in the last 7 days, newest first (e.g. `sender_authentication`: a refusal of its SPF, DKIM or DMARC; docs/COMPLIANCE.md)',
      }),
    ),
  },
  { $id: 'Domain' },
);

export const CreateDomainBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 253 }) }, { additionalProperties: false });

export const PatchDomainBody = Type.Object(
  {
    open_tracking: Type.Optional(Type.Boolean()),
    click_tracking: Type.Optional(Type.Boolean()),
    pool: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()], {
        description: "a pool named in the server's delivery.pools (422 otherwise), or null to name none",
      }),
    ),
    inbound: Type.Optional(Type.Boolean({ description: 'receive mail for routes; the domain must be verified' })),
  },
  { additionalProperties: false },
);
