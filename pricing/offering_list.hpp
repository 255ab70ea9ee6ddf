#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "pricing/offering.hpp"

namespace gpucost::pricing {

// `items` as shared pointers that all share one allocation (and one reference count): what
// a catalog built in bulk holds, so that the next version, which copies every pointer,
// touches one counter instead of one per item scattered over the heap.
template <typename T>
std::vector<std::shared_ptr<const T>> ShareInOneBlock(std::vector<T> items) {
    auto block = std::make_shared<const std::vector<T>>(std::move(items));
    std::vector<std::shared_ptr<const T>> out;
    out.reserve(block->size());
    for (const T& item : *block) {
        out.emplace_back(block, &item);  // aliasing: keeps the block alive
    }
    return out;
}

// The offerings of one catalog version, in the catalog's order: an immutable sequence that
// reads as a vector of Offering, while each offering is held by a shared pointer so that the
// next version of a catalog (a write changing one offering) shares every offering it did not
// change instead of copying it (a copy of 20,000 offerings was most of a write).
class OfferingList {
public:
    using Ptr = std::shared_ptr<const Offering>;

    // Random access over the pointers, yielding the offerings.
    class Iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using iterator_concept = std::random_access_iterator_tag;
        using value_type = Offering;
        using difference_type = std::ptrdiff_t;
        using pointer = const Offering*;
        using reference = const Offering&;

        Iterator() = default;
        explicit Iterator(std::vector<Ptr>::const_iterator at) : at_(at) {}

        reference operator*() const { return **at_; }
        pointer operator->() const { return at_->get(); }
        reference operator[](difference_type n) const { return *at_[n]; }
        Iterator& operator++() {
            ++at_;
            return *this;
        }
        Iterator operator++(int) {
            Iterator was = *this;
            ++at_;
            return was;
        }
        Iterator& operator--() {
            --at_;
            return *this;
        }
        Iterator operator--(int) {
            Iterator was = *this;
            --at_;
            return was;
        }
        Iterator& operator+=(difference_type n) {
            at_ += n;
            return *this;
        }
        Iterator& operator-=(difference_type n) {
            at_ -= n;
            return *this;
        }
        friend Iterator operator+(Iterator it, difference_type n) { return it += n; }
        friend Iterator operator+(difference_type n, Iterator it) { return it += n; }
        friend Iterator operator-(Iterator it, difference_type n) { return it -= n; }
        friend difference_type operator-(const Iterator& a, const Iterator& b) {
            return a.at_ - b.at_;
        }
        friend bool operator==(const Iterator& a, const Iterator& b) { return a.at_ == b.at_; }
        friend std::strong_ordering operator<=>(const Iterator& a, const Iterator& b) {
            return a.at_ <=> b.at_;
        }

    private:
        std::vector<Ptr>::const_iterator at_;
    };
    using const_iterator = Iterator;
    using value_type = Offering;

    OfferingList() = default;
    // REQUIRES: no null pointer.
    explicit OfferingList(std::vector<Ptr> items) : items_(std::move(items)) {}
    // Holds `offerings` in one shared allocation (ShareInOneBlock).
    static OfferingList FromVector(std::vector<Offering> offerings) {
        return OfferingList(ShareInOneBlock(std::move(offerings)));
    }

    std::size_t size() const { return items_.size(); }
    bool empty() const { return items_.empty(); }
    const Offering& operator[](std::size_t i) const { return *items_[i]; }
    const Offering& front() const { return *items_.front(); }
    const Offering& back() const { return *items_.back(); }
    Iterator begin() const { return Iterator(items_.begin()); }
    Iterator end() const { return Iterator(items_.end()); }

    // The shared pointers, for building the next version from this one.
    const std::vector<Ptr>& Pointers() const { return items_; }
    // A copy of every offering (to edit them, e.g. in tests and price books).
    std::vector<Offering> Copy() const { return {begin(), end()}; }

private:
    std::vector<Ptr> items_;
};

}  // namespace gpucost::pricing
