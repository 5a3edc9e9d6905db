//===- Serde/Parallel.h - Two-core JSON reading and writing -----*- C++ -*-===//
//
// Internal to lib/Serde. Big programs (100k nodes) are read and written on two
// threads: the long arrays and objects (nodes, tensor_values, input specs,
// constants, allocations) are split, each part converted or written on its own
// thread, and the results put together in document order. The output is the
// same, byte for byte, as one thread's, and so is an error: the one first in
// document order wins (a part's error is only reported if no earlier part
// failed), with the message and JSON pointer a serial run gives.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/OrderedMap.h"
#include "Serde/JsonBatch.h"
#include "Serde/JsonDom.h"
#include "Serde/JsonWriter.h"
#include "Support/Parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace exir::json {

/// Containers with fewer items than this are read and written on one thread
/// (a thread costs ~50 us; below a few thousand items it does not pay).
size_t parallelMinItems();
/// For tests: forces the parallel paths on small documents (0 restores the default).
void setParallelMinItems(size_t n);

/// Writes items [0, n) of the open container of `out` with
/// `writeRange(JsonWriter &w, size_t begin, size_t end)`, which must write
/// them as they would be written serially into `w`. Chunks alternate between
/// this thread (straight into `out`, which may stream) and one worker (into
/// a fragment that is spliced after the chunk before it); at most two
/// fragments are in flight, so the extra memory is a few chunks' text.
template <class WriteRange> void writeItemsParallel(JsonWriter &out, size_t n, WriteRange &&writeRange) {
  if (n < std::max<size_t>(parallelMinItems(), 2)) {
    writeRange(out, 0, n);
    return;
  }
  // ~64 chunks: small fragments (a few MB at 200k nodes), negligible hand-offs.
  const size_t chunk = std::clamp<size_t>(n / 64, 1, 4096);
  const size_t chunks = (n + chunk - 1) / chunk;
  auto range = [&](size_t k, auto &&f) { f(k * chunk, std::min(n, (k + 1) * chunk)); };

  struct Slot {
    JsonWriter writer;
    bool ready = false;
    std::exception_ptr error;
  };
  Slot slots[2];
  std::mutex mutex;
  std::condition_variable changed;
  bool cancel = false;

  auto work = [&] {
    for (size_t j = 0; 2 * j + 1 < chunks; ++j) {
      Slot &slot = slots[j % 2];
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return !slot.ready || cancel; });
        if (cancel) return;
      }
      bool failed = false;
      try {
        slot.writer.beginFragment();
        range(2 * j + 1, [&](size_t begin, size_t end) { writeRange(slot.writer, begin, end); });
      } catch (...) {
        slot.error = std::current_exception();
        failed = true;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        slot.ready = true;
      }
      changed.notify_all();
      if (failed) return;
    }
  };

  std::thread worker;
  try {
    worker = std::thread(work);
  } catch (const std::system_error &) {
    writeRange(out, 0, n);
    return;
  }
  // The worker is stopped and joined on every way out of here.
  struct Joiner {
    std::thread &worker;
    std::mutex &mutex;
    std::condition_variable &changed;
    bool &cancel;
    ~Joiner() {
      {
        std::lock_guard<std::mutex> lock(mutex);
        cancel = true;
      }
      changed.notify_all();
      worker.join();
    }
  } joiner{worker, mutex, changed, cancel};

  for (size_t k = 0; k < chunks; k += 2) {
    range(k, [&](size_t begin, size_t end) { writeRange(out, begin, end); });
    if (k + 1 == chunks) break;
    Slot &slot = slots[(k / 2) % 2];
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return slot.ready; });
    }
    if (slot.error) std::rethrow_exception(slot.error);
    out.splice(slot.writer.str());
    {
      std::lock_guard<std::mutex> lock(mutex);
      slot.ready = false;
    }
    changed.notify_all();
  }
}

/// Fills the empty `map` with the fields of the big object `o` on two threads:
/// the keys go in first, in document order, so each half converts its values
/// in place and the map's order is the serial one. `first` converts the first
/// half with `r`; `makeSecond(Reader &)` makes the second half's converter over
/// a copy of `r`; `convert(converter, value)` converts one value. Document
/// memory is given back every `releaseEvery` fields. Returns false, with `map`
/// empty, when the object is small or repeats a key (the last value wins, at the
/// first one's position): the caller then reads it serially.
template <class V, class First, class MakeSecond, class Convert>
bool convertObjectInHalves(Reader &r, Object o, OrderedMap<V> &map, size_t releaseEvery, First &first,
                           MakeSecond &&makeSecond, Convert &&convert) {
  size_t n = o.size();
  if (n < parallelMinItems() || n < 2 || !map.empty()) return false;
  std::vector<std::pair<std::string_view, Element>> fields;
  fields.reserve(n);
  for (auto field : o) fields.emplace_back(field.key, field.value);
  for (const auto &field : fields) map.set(std::string(field.first), {});
  if (map.size() != fields.size()) {
    map.clear();
    return false;
  }
  size_t mid = fields.size() / 2;
  Reader secondReader = r; // copied before the first half moves the path on
  auto run = [&](Reader &reader, auto &converter, size_t begin, size_t end) {
    Reader::LoopScope scope(reader);
    DomReleaser releaser(fields[begin].second, true);
    auto item = map.begin() + static_cast<std::ptrdiff_t>(begin);
    for (size_t i = begin; i < end; ++i, ++item) {
      if ((i - begin) % releaseEvery == 0) releaser.consumedUpToField(fields[i].second);
      scope.key(fields[i].first);
      item->second = convert(converter, fields[i].second);
    }
    if (end < fields.size()) releaser.consumedUpToField(fields[end].second);
  };
  runBeside([&] { run(r, first, 0, mid); },
            [&] {
              auto second = makeSecond(secondReader);
              run(secondReader, second, mid, fields.size());
            });
  return true;
}

/// Converts the items [0, n) of the deferred container `c` (see JsonBatch.h)
/// on two threads that take chunks of consecutive items in turn, so that they
/// stay busy together however the items' costs differ. `put(converter, index,
/// value)` converts one item (for an object, the reader's path names its key).
/// The first thread converts with `first` over `r`, after `before()` has run
/// there (work that only it can do; false gives up: the other thread stops
/// too and this returns false); the second with `makeSecond(Reader &)` over a
/// copy of `r`. An error is the first failing item's, in document order, as a
/// serial run reports it: a thread stops at its first error, and chunks past
/// the first failed one are not started.
template <class First, class MakeSecond, class Before, class Put>
bool convertInChunks(Reader &r, const DeferredContainer &c, First &first, MakeSecond &&makeSecond,
                     Before &&before, Put &&put) {
  const size_t n = c.size();
  // ~64 chunks of at most 4096 items: fine enough to balance, each a few batches.
  const size_t chunk = std::clamp<size_t>(n / 64, 1, 4096);
  const size_t chunks = (n + chunk - 1) / chunk;
  std::atomic<size_t> next{0}, firstFailed{chunks};
  std::atomic<bool> givenUp{false};
  std::vector<std::exception_ptr> errors(chunks);
  auto work = [&](Reader &reader, auto &converter) {
    Reader::LoopScope scope(reader);
    ItemBatches batches(*r.document(), c);
    // Chunks are taken in increasing order: when chunk k fails, every chunk
    // before it was taken already and is finished by its thread.
    for (size_t k; !givenUp.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < chunks;) {
      if (k > firstFailed.load()) return;
      try {
        batches.forEach(k * chunk, std::min(n, (k + 1) * chunk), [&](size_t i, std::string_view key, Element value) {
          if (c.object) scope.key(key);
          else scope.index(static_cast<int64_t>(i));
          put(converter, i, value);
        });
      } catch (...) {
        errors[k] = std::current_exception();
        for (size_t seen = firstFailed.load(); k < seen && !firstFailed.compare_exchange_weak(seen, k);) {
        }
        return;
      }
    }
  };
  Reader secondReader = r; // copied before the first thread moves the path on
  runBeside(
      [&] {
        if (!before()) {
          givenUp = true;
          return;
        }
        work(r, first);
      },
      [&] {
        auto second = makeSecond(secondReader);
        work(secondReader, second);
      });
  if (givenUp) return false;
  if (size_t k = firstFailed.load(); k < chunks) std::rethrow_exception(errors[k]);
  return true;
}

/// Appends the items of the deferred array `c`, converted, to `out`: on two
/// threads (convertInChunks) when it has many.
template <class T, class First, class MakeSecond, class Convert>
void convertDeferredArray(Reader &r, const DeferredContainer &c, std::vector<T> &out, First &first,
                          MakeSecond &&makeSecond, Convert &&convert) {
  const size_t n = c.size(), base = out.size();
  out.resize(base + n);
  if (n < parallelMinItems() || n < 2) {
    Reader::LoopScope scope(r);
    ItemBatches batches(*r.document(), c);
    batches.forEach(0, n, [&](size_t i, std::string_view, Element item) {
      scope.index(static_cast<int64_t>(i));
      out[base + i] = convert(first, item);
    });
    return;
  }
  convertInChunks(
      r, c, first, makeSecond, [] { return true; },
      [&](auto &converter, size_t i, Element item) { out[base + i] = convert(converter, item); });
}

/// The same for the deferred object `c` into the empty `map`, in document
/// order. On two threads, the first puts the keys in from the text (while
/// the second already converts values into their places) when all are plain
/// and none repeats; otherwise the fields are read in order on one thread
/// (the last value of a repeated key wins, at the first one's position).
template <class V, class First, class MakeSecond, class Convert>
void convertDeferredObject(Reader &r, const DeferredContainer &c, OrderedMap<V> &map, First &first,
                           MakeSecond &&makeSecond, Convert &&convert) {
  const size_t n = c.size();
  if (n >= parallelMinItems() && n >= 2 && map.empty()) {
    map.appendUnindexed(n);
    auto keys = [&] {
      std::string_view key;
      for (size_t i = 0; i < n; ++i) {
        if (!plainKey(r.document()->text(), c, i, key)) return false;
        map.itemAt(i).first.assign(key.data(), key.size());
      }
      return map.indexUnique();
    };
    if (convertInChunks(r, c, first, makeSecond, keys,
                        [&](auto &converter, size_t i, Element value) {
                          map.itemAt(i).second = convert(converter, value);
                        }))
      return;
    map.clear();
  }
  Reader::LoopScope scope(r);
  ItemBatches batches(*r.document(), c);
  batches.forEach(0, n, [&](size_t, std::string_view key, Element value) {
    scope.key(key);
    map.set(std::string(key), convert(first, value));
  });
}

} // namespace exir::json
