import { createHash } from 'node:crypto';
import { invalid, notFound } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { iso } from '../core/time.ts';
import type { SendInput } from '../messages/validate.ts';
import type { Db } from '../store/db.ts';
import { DuplicateKeyError } from '../store/errors.ts';
import { templatesRepo, type TemplateChanges, type TemplateRow } from '../store/templates.ts';
import { requireWorkspaceKey, type Principal } from '../tenancy/principal.ts';
import { CHANGE_VISIBLE_WITHIN_MS, TtlCache } from '../tenancy/ttl-cache.ts';
import { compileTemplate, MAX_SUBJECT_CHARS, renderTemplate, type CompiledTemplate, type RenderedTemplate, type RenderLimits } from './render.ts';

/** A stored template and its parsed form. */
export interface StoredTemplate {
  id: number;
  row: TemplateRow;
  compiled: CompiledTemplate;
}

export const templateView = ({ row, compiled }: StoredTemplate) => ({
  id: row.id,
  name: row.name,
  subject: row.subject,
  html: row.html,
  text: row.text,
  variables: compiled.variables,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

export interface TemplateInput {
  name: string;
  subject: string;
  html?: string | null;
  text?: string | null;
}

export const MAX_NAME_CHARS = 100;
/** A row id as a send may spell it: canonical decimal, within PostgreSQL's `integer`. */
const ID = /^[1-9][0-9]{0,9}$/;
const MAX_ID = 2_147_483_647;
// eslint-disable-next-line no-control-regex -- control characters are exactly what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;
const WHAT_DOMAIN_KEYS_CANNOT = 'create, change or delete templates';

function checkName(name: string): string {
  if (name.length < 1 || name.length > MAX_NAME_CHARS) throw invalid(`Field \`name\` must be 1 to ${MAX_NAME_CHARS} characters`);
  if (CONTROL.test(name)) throw invalid('Field `name` must not contain control characters');
  // A send names its template by id or by name: "42" would be both.
  if (/^[0-9]+$/.test(name)) throw invalid('Field `name` must not be all digits: a send names a template by id or by name');
  return name;
}

function checkSubject(subject: string): string {
  if (!subject.trim()) throw invalid('Field `subject` must not be empty');
  if (subject.length > MAX_SUBJECT_CHARS) throw invalid(`Field \`subject\` is longer than ${MAX_SUBJECT_CHARS} characters`);
  return subject;
}

const quoted = (ref: string | number) => String(ref).slice(0, 120);

/**
 * The templates of each workspace (SPEC §15): management, preview, and a send's `template`
 * rendered into its `subject`, `html` and `text`. Domain-scoped keys list, read, preview and
 * send with templates but do not change them.
 */
export class TemplateService {
  /**
   * Templates as sends look them up, by workspace and id or name, for 4 s: a change made through
   * this process empties it at once; one made through another process is seen within 4 s, the
   * delay the code base already accepts for keys and verified domains (DECISIONS.md).
   */
  private readonly bySend = new TtlCache<string, StoredTemplate>(CHANGE_VISIBLE_WITHIN_MS, 1000);
  /**
   * Parsed templates by their content's hash: mustache.js parses ~0.5 s per MB, so a large
   * template is parsed once, not on every cache miss or list. The content decides, so an entry
   * is never stale, whichever process changed the row.
   */
  private readonly parsed = new TtlCache<string, CompiledTemplate>(10 * 60_000, 100);

  constructor(private readonly deps: { db: Db; clock: Clock; limits: RenderLimits }) {}

  private compile(source: { subject: string; html: string | null; text: string | null }): CompiledTemplate {
    const key = createHash('sha256')
      .update(JSON.stringify([source.subject, source.html, source.text]))
      .digest('base64url');
    const hit = this.parsed.get(key);
    if (hit) return hit;
    const compiled = compileTemplate(source);
    this.parsed.set(key, compiled);
    return compiled;
  }

  private stored(row: TemplateRow): StoredTemplate {
    return { id: row.id, row, compiled: this.compile(row) };
  }

  /** The template, if it is of the caller's workspace; otherwise the one 404. */
  private async row(principal: Principal, id: number): Promise<TemplateRow> {
    const row = await templatesRepo.byId(this.deps.db, id);
    if (!row || row.workspace_id !== principal.workspaceId) throw notFound();
    return row;
  }

  private async write<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw invalid(`A template named \`${quoted(name)}\` already exists in this workspace`);
      throw err;
    }
  }

  async create(principal: Principal, input: TemplateInput): Promise<StoredTemplate> {
    requireWorkspaceKey(principal, WHAT_DOMAIN_KEYS_CANNOT);
    const name = checkName(input.name);
    const source = { subject: checkSubject(input.subject), html: input.html ?? null, text: input.text ?? null };
    if (source.html === null && source.text === null) throw invalid('Give at least one of `html` or `text`');
    const compiled = this.compile(source);
    const now = this.deps.clock.now();
    const row = await this.write(name, () =>
      templatesRepo.insert(this.deps.db, { workspace_id: principal.workspaceId, name, ...source, created_at: now, updated_at: now }),
    );
    return { id: row.id, row, compiled };
  }

  async list(principal: Principal, opts: { beforeId?: number; limit: number }): Promise<StoredTemplate[]> {
    return (await templatesRepo.list(this.deps.db, principal.workspaceId, opts)).map((row) => this.stored(row));
  }

  async get(principal: Principal, id: number): Promise<StoredTemplate> {
    return this.stored(await this.row(principal, id));
  }

  /** `html` or `text` set to null removes that part; one of them must remain. */
  async update(principal: Principal, id: number, patch: Partial<TemplateInput>): Promise<StoredTemplate> {
    requireWorkspaceKey(principal, WHAT_DOMAIN_KEYS_CANNOT);
    const before = await this.row(principal, id);
    const changes: TemplateChanges = { updated_at: this.deps.clock.now() };
    if (patch.name !== undefined) changes.name = checkName(patch.name);
    if (patch.subject !== undefined) changes.subject = checkSubject(patch.subject);
    if (patch.html !== undefined) changes.html = patch.html;
    if (patch.text !== undefined) changes.text = patch.text;
    const after = { ...before, ...changes };
    if (after.html === null && after.text === null) throw invalid('Give at least one of `html` or `text`: a template cannot lose both');
    const compiled = this.compile(after);
    await this.write(after.name, () => templatesRepo.update(this.deps.db, id, changes));
    this.bySend.clear();
    return { id, row: after, compiled };
  }

  async remove(principal: Principal, id: number): Promise<void> {
    requireWorkspaceKey(principal, WHAT_DOMAIN_KEYS_CANNOT);
    await this.row(principal, id);
    await templatesRepo.remove(this.deps.db, id);
    this.bySend.clear();
  }

  /** The template rendered with `variables`, as a send would have it (POST /templates/{id}/render). */
  async render(principal: Principal, id: number, variables: Record<string, unknown>): Promise<RenderedTemplate> {
    return renderTemplate((await this.get(principal, id)).compiled, variables, this.deps.limits);
  }

  /** A send's `template`: by id (a number, or its canonical decimal string) or by name, in the caller's workspace. */
  private async forSend(principal: Principal, ref: string | number): Promise<StoredTemplate> {
    const text = String(ref);
    const id = typeof ref === 'number' || ID.test(text) ? Number(text) : null;
    const key = `${principal.workspaceId}:${id === null ? `name:${text}` : `id:${id}`}`;
    const hit = this.bySend.get(key);
    if (hit) return hit;
    const row =
      id === null ? await templatesRepo.byName(this.deps.db, principal.workspaceId, text) : id <= MAX_ID ? await templatesRepo.byId(this.deps.db, id) : undefined;
    // A field of the send, not the resource of the request: a 422, not a 404.
    if (!row || row.workspace_id !== principal.workspaceId) throw invalid(`Unknown template \`${quoted(ref)}\``);
    const found = this.stored(row);
    this.bySend.set(key, found);
    return found;
  }

  /**
   * A send body with `template` becomes one with the rendered `subject`, `html` and `text`
   * (POST /emails); without `template` it is returned as it is.
   */
  async applyToSend(principal: Principal, input: SendInput): Promise<SendInput> {
    const { template, variables, ...rest } = input;
    if (template === undefined) {
      if (variables !== undefined) throw invalid('Field `variables` needs `template`: it fills the placeholders of a stored template');
      return input;
    }
    for (const field of ['subject', 'html', 'text'] as const) {
      if (input[field] !== undefined) throw invalid(`Field \`${field}\` cannot be given with \`template\`: the template gives it`);
    }
    const { compiled } = await this.forSend(principal, template);
    const rendered = renderTemplate(compiled, variables ?? {}, this.deps.limits);
    return {
      ...rest,
      subject: rendered.subject,
      ...(rendered.html === null ? {} : { html: rendered.html }),
      ...(rendered.text === null ? {} : { text: rendered.text }),
    };
  }
}
