import { Type } from '@sinclair/typebox';
import { METADATA_PARAM } from '../../messages/search.ts';
import { MESSAGE_STATUSES, RECIPIENT_STATUSES } from '../../messages/status.ts';

const OneOrMany = (description: string) =>
  Type.Union([Type.String({ maxLength: 998 }), Type.Array(Type.String({ maxLength: 998 }), { maxItems: 1000 })], { description });

export const SendBody = Type.Object(
  {
    from: Type.String({ maxLength: 998, description: '`addr@domain` or `Name <addr@domain>` on a verified domain' }),
    to: OneOrMany('one recipient or many'),
    subject: Type.Optional(Type.String({ maxLength: 998, description: 'required unless `template` is given' })),
    html: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
    cc: Type.Optional(OneOrMany('carbon copy')),
    bcc: Type.Optional(OneOrMany('blind carbon copy')),
    replyTo: Type.Optional(OneOrMany('Reply-To; also accepted as reply_to')),
    reply_to: Type.Optional(OneOrMany('Reply-To')),
    headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 998 }), { maxProperties: 50, description: 'custom headers' })),
    scheduled_at: Type.Optional(Type.String({ description: 'ISO 8601 with a zone offset; at most 30 days ahead' })),
    stream: Type.Optional(Type.String({ description: '`transactional` (default) or `broadcast`' })),
    attachments: Type.Optional(
      Type.Array(
        Type.Object(
          { filename: Type.String({ maxLength: 255 }), content: Type.String({ description: 'base64' }), content_type: Type.Optional(Type.String({ maxLength: 255 })) },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
    tags: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ maxLength: 64 }), value: Type.String({ maxLength: 256 }) }, { additionalProperties: false }), {
        maxItems: 10,
        description: 'at most 10; names of 1-64 letters, digits, `_` or `-`; returned with the message and in every webhook payload of it',
      }),
    ),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 256 }), {
        maxProperties: 20,
        description: 'up to 20 string values of at most 256 characters; returned with the message and in every webhook payload of it',
      }),
    ),
    template: Type.Optional(
      Type.Union([Type.String({ maxLength: 200 }), Type.Integer({ minimum: 1 })], {
        description: 'a stored template, by id or name, instead of `subject`, `html` and `text`',
      }),
    ),
    variables: Type.Optional(
      Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: 1000, description: "the values of the template's `{{placeholders}}`" }),
    ),
  },
  { additionalProperties: false },
);

export const SendResponse = Type.Object({ id: Type.Integer(), stream: Type.String() });

export const MAX_BATCH = 100;

export const BatchBody = Type.Array(SendBody, {
  minItems: 1,
  maxItems: MAX_BATCH,
  description: `up to ${MAX_BATCH} send requests; each counts against the rate limit, and all are accepted or none`,
});

export const BatchResponse = Type.Object({ data: Type.Array(SendResponse, { description: 'one per message, in the order given' }) });

const Recipient = Type.Object({
  address: Type.String(),
  status: Type.String({ description: `one of: ${RECIPIENT_STATUSES.join(', ')}` }),
  attempts: Type.Integer(),
  last_response: Type.Union([Type.String(), Type.Null()]),
  source_address: Type.Union([Type.String(), Type.Null()], {
    description: 'the sending address its last attempt went out from (delivery.sourceAddresses); null when none is configured',
  }),
  tls: Type.Union([Type.Literal('none'), Type.Literal('opportunistic'), Type.Literal('mta-sts'), Type.Null()], {
    description:
      "how its last delivery attempt's connection was protected: none, opportunistic (TLS, certificate unchecked), mta-sts (verified for an MX host its domain's MTA-STS policy names); null before any connection",
  }),
  updated_at: Type.String(),
});

const summaryFields = {
  id: Type.Integer(),
  stream: Type.String(),
  status: Type.String({ description: `derived from the recipients': ${MESSAGE_STATUSES.join(', ')}` }),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  reply_to: Type.Array(Type.String()),
  subject: Type.String(),
  tags: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
  metadata: Type.Record(Type.String(), Type.String()),
  created_at: Type.String(),
  scheduled_at: Type.Union([Type.String(), Type.Null()]),
};

export const EmailSummary = Type.Object(summaryFields, { $id: 'EmailSummary' });

export const Email = Type.Object(
  {
    ...summaryFields,
    message_id: Type.String(),
    recipients: Type.Array(Recipient),
    events: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'webhook payloads, oldest first' }),
  },
  { $id: 'Email' },
);

export const ListEmailsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(Type.String({ description: `one of: ${MESSAGE_STATUSES.join(', ')}` })),
    stream: Type.Optional(Type.String({ description: 'transactional or broadcast' })),
    recipient: Type.Optional(Type.String({ maxLength: 320 })),
    recipient_status: Type.Optional(Type.String({ description: `messages with a recipient in this status, one of: ${RECIPIENT_STATUSES.join(', ')}` })),
    from: Type.Optional(Type.String({ maxLength: 998, description: 'the sender address, compared without case' })),
    subject: Type.Optional(Type.String({ maxLength: 998, description: 'contained in the subject, compared without case' })),
    tag: Type.Optional(
      Type.Array(Type.String({ maxLength: 400 }), { maxItems: 100, description: '`name:value`, or `name` for any value; repeat it for messages with every tag given' }),
    ),
    created_after: Type.Optional(Type.String({ maxLength: 100, description: 'created at or after this moment: ISO 8601 with a zone offset' })),
    created_before: Type.Optional(Type.String({ maxLength: 100, description: 'created before this moment: ISO 8601 with a zone offset' })),
  },
  {
    additionalProperties: false,
    // `metadata.KEY=value`: messages whose metadata has that value for KEY.
    patternProperties: { [METADATA_PARAM.source]: Type.String({ maxLength: 400 }) },
  },
);

export const EmailContent = Type.Object(
  {
    available: Type.Boolean({ description: 'false once retention pruned the body' }),
    headers: Type.Array(Type.Object({ name: Type.String(), value: Type.String() }), {
      description: 'the header fields as sent, before per-recipient fields and the DKIM signature',
    }),
    html: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    raw: Type.Union([Type.String(), Type.Null()], { description: 'the MIME source (the first 2 MB)' }),
  },
  { description: 'the message as its recipients get it, before tracking rewrites and signing' },
);
