// A worker module whose import never finishes: only the pool's startupTimeout stops it.
while (true) {
  // never yields
}
