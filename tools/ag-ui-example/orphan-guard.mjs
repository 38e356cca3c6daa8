// Preloaded (`node --import`) into each process the AG-UI example's launcher starts. When the launcher
// is gone without stopping it (killed with SIGKILL, say), the process has a new parent; it then sends
// itself SIGTERM, once, so that its own shutdown runs as on Ctrl-C. Checked twice a second; the check
// never keeps the process alive.
const launcher = process.ppid;
const check = setInterval(() => {
  if (process.ppid === launcher) return;
  clearInterval(check);
  process.kill(process.pid, 'SIGTERM');
}, 500);
check.unref();
