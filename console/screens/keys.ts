import { api, type Page } from '../api.ts';
import { field, h, notice, replace, select, stamp, statusBadge, table } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { ApiKey, Domain } from '../types.ts';

export const keysScreen: Render = async (main) => {
  const [keys, domains] = await Promise.all([api.get<Page<ApiKey>>('/api-keys'), api.get<Page<Domain>>('/domains')]);
  const out = h('div', { 'aria-live': 'polite' });
  const name = h('input', { type: 'text', name: 'name', placeholder: 'billing app' });
  const scope = select('domain', [['', 'the whole workspace'], ...domains.data.map((d): [string, string] => [d.name, `only ${d.name}`])]);
  const create = h(
    'form',
    { class: 'inline', 'aria-label': 'Create an API key' },
    field('Name', name),
    field('Scope', scope),
    h('button', { type: 'submit' }, 'Create key'),
  );
  create.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const k = await api.post<ApiKey & { api_key: string }>('/api-keys', { name: name.value.trim() || undefined, ...(scope.value ? { domain: scope.value } : {}) });
      replace(out, h('p', {}, `Key "${k.name}" created. Copy it now: it is shown only this once.`), h('p', { class: 'secret' }, k.api_key));
      await drawList();
    } catch (err) {
      replace(out, notice((err as Error).message, 'error'));
    }
  });
  const list = h('div', {});
  const revoke = (k: ApiKey) => {
    if (k.revoked_at) return statusBadge('revoked');
    const b = h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke key ${k.name}` }, 'Revoke');
    b.addEventListener('click', async () => {
      if (b.dataset.armed !== 'yes') {
        b.dataset.armed = 'yes';
        b.textContent = 'Confirm revoke';
        return;
      }
      try {
        await api.delete(`/api-keys/${k.id}`);
        replace(out, notice(`Key "${k.name}" is revoked; programs using it now get 401.`));
        await drawList();
      } catch (err) {
        replace(out, notice((err as Error).message, 'error'));
      }
    });
    return b;
  };
  const drawList = async (page?: Page<ApiKey>) => {
    const current = page ?? (await api.get<Page<ApiKey>>('/api-keys'));
    replace(
      list,
      table(
        ['Name', 'Starts with', 'Scope', 'Created', ''],
        current.data.map((k) => [k.name, h('code', {}, `${k.prefix}…`), k.scope, stamp(k.created_at), revoke(k)]),
      ),
    );
  };
  await drawList(keys);
  replace(main, h('h1', {}, 'API keys'), h('div', { class: 'card' }, create, out), list);
};
