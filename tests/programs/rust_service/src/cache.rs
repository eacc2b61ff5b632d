//! The service's cache: every request adds an entry and none is ever removed,
//! so it is the leak that grows. Each entry's value is exactly ENTRY_BYTES,
//! allocated in cache_entry, which the tests count by name.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub const ENTRY_BYTES: usize = 4096;

pub type Cache = Arc<Mutex<HashMap<String, Vec<u8>>>>;

#[inline(never)]
pub fn new_cache() -> Cache {
    Arc::new(Mutex::new(HashMap::new()))
}

/// Stores `key` with a fresh value; returns the number of entries. The map's
/// own table grows here too, so this frame holds more than the values.
#[inline(never)]
pub fn cache_insert(cache: &Cache, key: String, fill: u8) -> usize {
    let entry = cache_entry(fill);
    let mut map = cache.lock().expect("cache lock poisoned");
    map.insert(key, entry);
    map.len()
}

/// One allocation of exactly ENTRY_BYTES.
#[inline(never)]
fn cache_entry(fill: u8) -> Vec<u8> {
    vec![fill; ENTRY_BYTES]
}
