import { currentSession, signIn, signOut, whenSignedOut, ApiError, type Session } from './api.ts';
import { field, h, notice, replace } from './dom.ts';
import { routeFor, SCREENS, type Screen } from './routes.ts';

const app = document.getElementById('app')!;
let session: Session | null = null;
/** Stops what the shown screen runs in the background (the live message list). */
let leaveScreen: (() => void) | null = null;

function signInForm(message?: string): void {
  const key = h('input', { type: 'password', name: 'api_key', autocomplete: 'off', required: true, placeholder: 'mk_…' });
  const form = h(
    'form',
    { class: 'card signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'mailsvc console'),
    h('p', {}, 'Sign in with an API key of your workspace. The key is not stored in the browser: the server keeps a signed session instead.'),
    message ? notice(message, 'error') : null,
    field('API key', key),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      session = await signIn(key.value.trim());
      if (!location.hash || location.hash === '#/signin') location.hash = `#/${SCREENS[0].path}`;
      void render();
    } catch (err) {
      signInForm(err instanceof ApiError && err.status === 401 ? 'That API key is not valid (unknown or revoked).' : String((err as Error).message));
    }
  });
  replace(app, h('main', { id: 'main', class: 'signin-page' }, form));
  key.focus();
}

function layout(screen: Screen | null): HTMLElement {
  const out = h('button', { type: 'button', class: 'link-button' }, 'Sign out');
  out.addEventListener('click', async () => {
    await signOut().catch(() => undefined);
    session = null;
    signInForm();
  });
  const nav = h(
    'nav',
    { 'aria-label': 'Console' },
    h(
      'ul',
      {},
      SCREENS.filter((s) => s.shown(session!)).map((s) => h('li', {}, h('a', { href: `#/${s.path}`, 'aria-current': screen?.path === s.path ? 'page' : null }, s.title))),
    ),
  );
  return h(
    'header',
    { class: 'top' },
    h('a', { class: 'brand', href: `#/${SCREENS[0].path}` }, 'mailsvc'),
    nav,
    h('div', { class: 'who' }, h('span', { class: 'scope' }, `key #${session!.key_id} · ${session!.scope}`), out),
  );
}

async function render(): Promise<void> {
  leaveScreen?.();
  leaveScreen = null;
  if (!session) return signInForm();
  const { screen, params } = routeFor(location.hash);
  const main = h('main', { id: 'main', tabindex: '-1' });
  replace(app, layout(screen), main);
  if (!screen) {
    replace(main, h('h1', {}, 'Not found'), h('p', {}, 'No such screen.'));
    return;
  }
  document.title = `${screen.title} · mailsvc console`;
  try {
    leaveScreen = (await screen.render(main, params, session)) ?? null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return;
    main.append(notice((err as Error).message, 'error'));
  }
}

whenSignedOut(() => {
  session = null;
  signInForm('Your session ended; sign in again.');
});

window.addEventListener('hashchange', () => void render());

void (async () => {
  try {
    session = await currentSession();
  } catch (err) {
    replace(app, h('main', { id: 'main' }, notice(`The server did not answer: ${(err as Error).message}`, 'error')));
    return;
  }
  if (session && !location.hash) location.replace(`#/${SCREENS[0].path}`);
  await render();
})();
