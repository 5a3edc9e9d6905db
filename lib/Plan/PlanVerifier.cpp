//===- Plan/PlanVerifier.cpp - Independent check of a placement -----------===//
//
// Per-item checks first (arena exists, alignment, bounds, share groups), then
// a sweep over time: at each node, units that died are removed and units
// that become live are inserted into a set of live byte ranges ordered by
// (arena, offset). The set never holds two overlapping ranges, so a new range
// overlaps something iff it overlaps its predecessor or its successor.
// A share group is one entry whose extent is its largest live member.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanVerifier.h"

#include "Support/Error.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace exir::plan {

namespace {

std::string range(uint64_t offset, uint64_t size) {
  return "[" + std::to_string(offset) + "," + std::to_string(offset + size) + ")";
}

/// One live storage (an item, or a share group) in the sweep.
struct LiveEntry {
  uint32_t memId;
  uint64_t offset;
  uint32_t storage; // index of the storage (first item of a share group)
  bool operator<(const LiveEntry &o) const {
    if (memId != o.memId)
      return memId < o.memId;
    if (offset != o.offset)
      return offset < o.offset;
    return storage < o.storage;
  }
};

} // namespace

void verifyPlacement(const std::vector<PlanItem> &items, const Placement &placement,
                     uint64_t alignment) {
  checkAlignment(alignment);
  if (placement.offsets.size() != items.size())
    throw Error("placement has " + std::to_string(placement.offsets.size()) + " offsets for " +
                std::to_string(items.size()) + " items");
  if (!placement.arenaSizes.empty() && placement.arenaSizes[0] != 0)
    throw Error("arena 0 is reserved but has size " + std::to_string(placement.arenaSizes[0]));

  size_t n = items.size();
  std::vector<uint64_t> sizes(n);
  std::vector<uint32_t> storageOf(n);
  std::unordered_map<int32_t, uint32_t> firstOfGroup;
  for (size_t i = 0; i < n; ++i) {
    const PlanItem &item = items[i];
    uint64_t offset = placement.offsets[i];
    if (item.start > item.end)
      throw Error("'" + item.name + "' has lifetime [" + std::to_string(item.start) + ", " +
                      std::to_string(item.end) + "] that ends before it starts",
                  {}, item.name);
    if (item.memId == 0 || item.memId >= placement.arenaSizes.size())
      throw Error("'" + item.name + "' is in arena " + std::to_string(item.memId) +
                      " but the placement has arenas 1.." +
                      std::to_string(placement.arenaSizes.size() - 1),
                  {}, item.name);
    if (offset % alignment != 0)
      throw Error("'" + item.name + "' offset " + std::to_string(offset) +
                      " is not a multiple of the alignment " + std::to_string(alignment),
                  {}, item.name);
    if (item.size > UINT64_MAX - alignment)
      throw Error("'" + item.name + "' is too large to align", {}, item.name);
    sizes[i] = alignUp(item.size, alignment);
    uint64_t arenaSize = placement.arenaSizes[item.memId];
    if (offset > arenaSize || sizes[i] > arenaSize - offset)
      throw Error("'" + item.name + "' " + range(offset, sizes[i]) + " exceeds arena " +
                      std::to_string(item.memId) + " of " + std::to_string(arenaSize) + " bytes",
                  {}, item.name);
    storageOf[i] = static_cast<uint32_t>(i);
    if (item.shareGroup >= 0) {
      auto [it, inserted] = firstOfGroup.try_emplace(item.shareGroup, static_cast<uint32_t>(i));
      const PlanItem &first = items[it->second];
      uint64_t firstOffset = placement.offsets[it->second];
      if (!inserted && (first.memId != item.memId || firstOffset != offset))
        throw Error("'" + first.name + "' and '" + item.name + "' share storage group " +
                        std::to_string(item.shareGroup) + " but are placed at " +
                        std::to_string(first.memId) + ":" + std::to_string(firstOffset) +
                        " and " + std::to_string(item.memId) + ":" + std::to_string(offset),
                    {}, item.name);
      storageOf[i] = it->second;
    }
  }

  // Events: removal at end + 1 sorts before insertion at the same time.
  struct Event {
    uint64_t time;
    bool insert;
    uint32_t item;
  };
  std::vector<Event> events;
  events.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    if (sizes[i] == 0)
      continue;
    events.push_back({items[i].start, true, static_cast<uint32_t>(i)});
    events.push_back({uint64_t(items[i].end) + 1, false, static_cast<uint32_t>(i)});
  }
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    if (a.time != b.time)
      return a.time < b.time;
    if (a.insert != b.insert)
      return !a.insert;
    return a.item < b.item;
  });

  // Live members of each share group as (aligned size, item); the last one
  // spans the group's extent. A lone item is its own storage and extent.
  std::unordered_map<uint32_t, std::set<std::pair<uint64_t, uint32_t>>> groupMembers;
  auto widest = [&](uint32_t storage) {
    if (items[storage].shareGroup < 0)
      return storage;
    return std::prev(groupMembers[storage].end())->second;
  };
  std::set<LiveEntry> live;
  for (const Event &event : events) {
    uint32_t storage = storageOf[event.item];
    uint32_t memId = items[event.item].memId;
    uint64_t offset = placement.offsets[event.item];
    LiveEntry entry{memId, offset, storage};
    if (items[event.item].shareGroup >= 0) {
      auto &members = groupMembers[storage];
      if (!members.empty())
        live.erase(entry);
      if (!event.insert) {
        members.erase({sizes[event.item], event.item});
        if (!members.empty())
          live.insert(entry);
        continue;
      }
      members.insert({sizes[event.item], event.item});
    } else if (!event.insert) {
      live.erase(entry);
      continue;
    }
    uint32_t mine = widest(storage);
    uint64_t end = offset + sizes[mine];
    auto next = live.lower_bound(entry);
    auto report = [&](const LiveEntry &other) {
      uint32_t theirs = widest(other.storage);
      throw Error("'" + items[theirs].name + "' " + range(other.offset, sizes[theirs]) + " and '" +
                      items[mine].name + "' " + range(offset, sizes[mine]) +
                      " overlap in memory while both live at node " + std::to_string(event.time),
                  {}, items[mine].name);
    };
    if (next != live.end() && next->memId == memId && next->offset < end)
      report(*next);
    if (next != live.begin()) {
      auto prev = std::prev(next);
      if (prev->memId == memId && prev->offset + sizes[widest(prev->storage)] > offset)
        report(*prev);
    }
    live.insert(entry);
  }
}

} // namespace exir::plan
