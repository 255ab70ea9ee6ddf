#pragma once

// The 64-bit row hashes an actuals import remembers (a 1 GB FOCUS export in
// as little memory as its identities allow): which rows were seen, for telling identical rows
// apart (focus_actuals.cpp) and for the ids already in a store (actuals_command.cpp).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpucost::import {

// A set of 64-bit hashes in one open-addressed table (linear probing, at most 3/4 full): 8
// bytes a slot, 11 to 21 bytes an entry, where a std::unordered_set node and its bucket take
// about 40. Growing holds the old and the new table for a moment (1.5 times the new one).
class RowHashSet {
public:
    // True when `hash` was not in the set (it is now).
    bool Insert(std::uint64_t hash) {
        if (hash == kEmpty) {
            const bool added = !has_empty_value_;
            has_empty_value_ = true;
            size_ += added ? 1 : 0;
            return added;
        }
        if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
        std::uint64_t& slot = Find(slots_, hash);
        if (slot == hash) return false;
        slot = hash;
        ++size_;
        return true;
    }
    std::size_t size() const { return size_; }

private:
    // The slot marker for "empty"; the hash equal to it is held by has_empty_value_.
    static constexpr std::uint64_t kEmpty = 0;
    static constexpr std::size_t kFirstSlots = 1024;

    // The slot holding `hash`, or the empty slot where it goes. FNV-1a's low bits are mixed
    // (Fibonacci hashing) before they pick the slot, so similar rows do not cluster.
    static std::uint64_t& Find(std::vector<std::uint64_t>& slots, std::uint64_t hash) {
        const std::size_t mask = slots.size() - 1;
        std::size_t i = static_cast<std::size_t>((hash * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
        while (slots[i] != kEmpty && slots[i] != hash) i = (i + 1) & mask;
        return slots[i];
    }

    void Grow() {
        std::vector<std::uint64_t> bigger(slots_.empty() ? kFirstSlots : slots_.size() * 2, kEmpty);
        for (std::uint64_t hash : slots_) {
            if (hash != kEmpty) Find(bigger, hash) = hash;
        }
        slots_.swap(bigger);
    }

    std::vector<std::uint64_t> slots_;  // a power of two of them
    std::size_t size_ = 0;
    bool has_empty_value_ = false;
};

}  // namespace gpucost::import
