import type { Session } from './api.ts';
import { messageList } from './screens/messages.ts';
import { messagePage } from './screens/message.ts';
import { suppressionsScreen } from './screens/suppressions.ts';
import { webhookPage, webhooksScreen } from './screens/webhooks.ts';
import { routePage, routesScreen } from './screens/routes.ts';
import { overviewScreen } from './screens/overview.ts';
import { queueScreen } from './screens/queue.ts';
import { domainPage, domainsScreen } from './screens/domains.ts';
import { keysScreen } from './screens/keys.ts';
import { capturePage, sandboxScreen } from './screens/sandbox.ts';
import { templatePage, templatesScreen } from './screens/templates.ts';

/** Renders into `main`; may return a function that stops its background work. */
export type Render = (main: HTMLElement, params: Params, session: Session) => Promise<(() => void) | void>;

export interface Params {
  id?: string;
  query: URLSearchParams;
}

export interface Screen {
  path: string;
  title: string;
  render: Render;
  /** Whether the navigation lists it for this session. */
  shown(session: Session): boolean;
  /** The page of one item, at `<path>/<id>`. */
  item?: Render;
}

const always = () => true;
const workspaceKey = (s: Session) => s.scope === 'workspace';

export const SCREENS: Screen[] = [
  { path: 'overview', title: 'Overview', render: overviewScreen, shown: always },
  { path: 'messages', title: 'Messages', render: messageList, item: messagePage, shown: always },
  { path: 'queue', title: 'Queue', render: queueScreen, shown: always },
  { path: 'suppressions', title: 'Suppressions', render: suppressionsScreen, shown: always },
  { path: 'templates', title: 'Templates', render: templatesScreen, item: templatePage, shown: always },
  { path: 'domains', title: 'Domains', render: domainsScreen, item: domainPage, shown: workspaceKey },
  { path: 'webhooks', title: 'Webhooks', render: webhooksScreen, item: webhookPage, shown: workspaceKey },
  { path: 'routes', title: 'Routes', render: routesScreen, item: routePage, shown: workspaceKey },
  { path: 'keys', title: 'API keys', render: keysScreen, shown: workspaceKey },
  { path: 'sandbox', title: 'Sandbox inbox', render: sandboxScreen, item: capturePage, shown: (s) => s.sandbox },
];

/** `#/messages/12?x=y` → the messages screen's item page with id 12. */
export function routeFor(hash: string): { screen: Screen | null; params: Params } {
  const [path, search = ''] = hash.replace(/^#\/?/, '').split('?');
  const [name, id] = path.split('/');
  const query = new URLSearchParams(search);
  const screen = SCREENS.find((s) => s.path === (name || SCREENS[0].path)) ?? null;
  if (!screen) return { screen: null, params: { query } };
  if (id !== undefined) {
    if (!screen.item || !/^[1-9]\d{0,15}$/.test(id)) return { screen: null, params: { query } };
    return { screen: { ...screen, render: screen.item }, params: { id, query } };
  }
  return { screen, params: { query } };
}
