import { Type, type TSchema } from '@sinclair/typebox';

export const ErrorBody = Type.Object({ error: Type.String() }, { $id: 'Error', additionalProperties: false });

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

/** What DELETE of a resource named by its id answers. */
export const Deleted = Type.Object({ id: Type.Integer(), deleted: Type.Boolean() });

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const page = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) });

const err = (description: string) => ({ ...Type.Ref('Error'), description });

/** The error statuses every authenticated route can answer with. */
export const authErrors = {
  401: err('Missing, unknown or revoked API key'),
  429: err('Rate limit exceeded'),
};

export const errors = {
  400: err('Body is not valid JSON'),
  403: err('Not allowed for a domain-scoped key'),
  404: err('Not found'),
  409: err('Conflict'),
  413: err('Body too large'),
  422: err('Validation failed'),
};

export const bearerSecurity = [{ bearerAuth: [] as string[] }];
