// A worker module that fails while being imported.
throw new Error("broken at import")
