// Tests run on the configuration the repository ships, whatever the person running them has set:
// config/local.json is skipped and their MAILSVC_* variables are dropped, in this process and in
// every CLI or server child it spawns. MAILSVC_TEST_* (e.g. MAILSVC_TEST_PG_URL) select what the
// suite runs on and stay.
for (const name of Object.keys(process.env)) {
  if (name.startsWith('MAILSVC_') && !name.startsWith('MAILSVC_TEST_')) delete process.env[name];
}
process.env.MAILSVC_NO_LOCAL_CONFIG = '1';
