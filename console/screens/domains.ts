import { api, type Page } from '../api.ts';
import { copyButton, field, h, link, notice, replace, stamp, statusBadge, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { Domain } from '../types.ts';

export const domainsScreen: Render = async (main) => {
  const list = await api.get<Page<Domain>>('/domains');
  const status = h('div', { 'aria-live': 'polite' });
  const name = h('input', { type: 'text', name: 'name', required: true, placeholder: 'example.com' });
  const add = h('form', { class: 'inline', 'aria-label': 'Add a domain' }, field('Domain name', name), h('button', { type: 'submit' }, 'Add domain'));
  add.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const d = await api.post<Domain>('/domains', { name: name.value.trim() });
      location.hash = `#/domains/${d.id}`;
    } catch (err) {
      replace(status, notice((err as Error).message, 'error'));
    }
  });
  replace(
    main,
    h('h1', {}, 'Domains'),
    h('div', { class: 'card' }, add, status),
    list.data.length
      ? table(
          ['Domain', 'Status', 'Open tracking', 'Click tracking', 'Sending pool', 'Verified'],
          list.data.map((d) => [
            link(`/domains/${d.id}`, d.name),
            statusBadge(d.status),
            d.open_tracking ? 'on' : 'off',
            d.click_tracking ? 'on' : 'off',
            d.pool ?? '—',
            stamp(d.verified_at),
          ]),
        )
      : notice('No sending domain yet: add one, publish its records, then verify it.'),
  );
};

const PURPOSE: Record<string, string> = {
  dkim: 'DKIM key (required: proves the domain is yours)',
  return_path: 'bounces come back here (optional; SPF then aligns)',
  spf: 'SPF for the return path (optional, with return path)',
  dmarc: 'DMARC policy (advisory)',
};

export const domainPage: Render = async (main, params) => {
  let d = await api.get<Domain>(`/domains/${params.id}`);
  const out = h('div', { 'aria-live': 'polite' });
  const body = h('div', {});

  const draw = () => {
    const verify = h('button', { type: 'button' }, 'Verify now');
    verify.addEventListener('click', async () => {
      verify.disabled = true;
      try {
        d = await api.post<Domain>(`/domains/${d.id}/verify`);
        replace(
          out,
          notice(
            d.status === 'verified' ? `${d.name} is verified.` : `Not verified yet: ${d.problems.join('; ') || 'a required record does not match'}`,
            d.status === 'verified' ? 'info' : 'error',
          ),
        );
        draw();
      } catch (err) {
        replace(out, notice((err as Error).message, 'error'));
        verify.disabled = false;
      }
    });
    const toggle = (flag: 'open_tracking' | 'click_tracking', label: string) => {
      const box = h('input', { type: 'checkbox', name: flag, checked: d[flag] });
      box.addEventListener('change', async () => {
        try {
          d = await api.patch<Domain>(`/domains/${d.id}`, { [flag]: box.checked });
          replace(out, notice(`${label} is ${d[flag] ? 'on' : 'off'}.`));
        } catch (err) {
          box.checked = !box.checked;
          replace(out, notice((err as Error).message, 'error'));
        }
      });
      return h('label', { class: 'switch' }, box, ` ${label}`);
    };
    replace(
      body,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Status'),
        h('dd', {}, statusBadge(d.status)),
        h('dt', {}, 'DKIM selector'),
        h('dd', {}, d.selector),
        h('dt', {}, 'Verified'),
        h('dd', {}, when(d.verified_at)),
        h('dt', {}, 'Sending pool'),
        h('dd', {}, d.pool ?? "none of its own: the workspace's, else the stream's, else every source address"),
      ),
      h('div', { class: 'row-actions' }, verify),
      h('h2', {}, 'DKIM keys'),
      table(
        ['Selector', 'Algorithm', 'Status', 'Created', 'Verified', 'Published until'],
        d.keys.map((k) => [
          h('code', {}, k.selector),
          h('span', { class: 'nowrap' }, k.algorithm),
          statusBadge(k.status),
          stamp(k.created_at),
          stamp(k.verified_at),
          stamp(k.retire_after),
        ]),
      ),
      h('h2', {}, 'DNS records to publish'),
      table(
        ['Type', 'Name', 'Value', 'Purpose', 'State'],
        d.records.map((r) => [
          r.type,
          h('div', { class: 'copyable' }, h('code', { class: 'record-name' }, r.name), ' ', copyButton(r.name, `Copy the name of the ${r.purpose} record`)),
          h(
            'div',
            { class: 'copyable' },
            h('code', { class: 'record-value' }, r.priority === undefined ? r.value : `${r.priority} ${r.value}`),
            ' ',
            copyButton(r.value, `Copy the value of the ${r.purpose} record`),
          ),
          PURPOSE[r.purpose] ?? r.purpose,
          r.verified ? statusBadge('verified') : statusBadge(r.required ? 'pending' : 'optional'),
        ]),
      ),
      h('h2', {}, 'Tracking'),
      h('p', { class: 'muted' }, 'When off, no pixel or rewritten link is added and no opened or clicked event fires for this domain.'),
      h('div', { class: 'row-actions' }, toggle('open_tracking', 'Open tracking'), toggle('click_tracking', 'Click tracking')),
    );
  };
  draw();
  replace(main, h('p', { class: 'crumbs' }, link('/domains', '← Domains')), h('h1', {}, d.name), out, body);
};
