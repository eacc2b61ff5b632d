// The preload's stack table without the preload: interning, deduplication,
// growth past the first table, and the writer's view of each stack.
#include "stack_table.h"

#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "os.h"
#include "thread_buffer.h"

using namespace memrec::preload;

namespace {

std::vector<std::uint64_t> frames_for(std::uint64_t seed, std::size_t depth) {
  std::vector<std::uint64_t> ips;
  for (std::size_t i = 0; i < depth; ++i) ips.push_back(0x400000 + seed * 4096 + i * 16);
  return ips;
}

struct MappedBuffer {
  MappedBuffer() : buf(static_cast<ThreadBuffer*>(os::map(sizeof(ThreadBuffer)))) { new (buf) ThreadBuffer(); }
  ~MappedBuffer() { os::unmap(buf, sizeof(ThreadBuffer)); }
  ThreadBuffer* buf;
};

}  // namespace

TEST_SUITE("preload/stack_table") {
  TEST_CASE("the same frames get the same id and different frames a different one") {
    REQUIRE(stack_table_init());
    stack_table_reset();
    const auto a = frames_for(1, 27);
    const auto b = frames_for(2, 27);
    const std::uint32_t id_a = intern_stack_slow(hash_stack(a, false), a, false);
    const std::uint32_t id_b = intern_stack_slow(hash_stack(b, false), b, false);
    CHECK(id_a == 1);
    CHECK(id_b == 2);
    CHECK(intern_stack_slow(hash_stack(a, false), a, false) == id_a);
    CHECK(stack_id_end() == 3);
  }

  TEST_CASE("a truncated stack is not the same stack as its complete twin") {
    REQUIRE(stack_table_init());
    stack_table_reset();
    const auto a = frames_for(7, 16);
    const std::uint32_t whole = intern_stack_slow(hash_stack(a, false), a, false);
    const std::uint32_t cut = intern_stack_slow(hash_stack(a, true), a, true);
    CHECK(whole != cut);
    CHECK(stack_view(cut).truncated);
    CHECK_FALSE(stack_view(whole).truncated);
  }

  TEST_CASE("the writer's view holds the frames in order") {
    REQUIRE(stack_table_init());
    stack_table_reset();
    const auto a = frames_for(3, 5);
    const std::uint32_t id = intern_stack_slow(hash_stack(a, false), a, false);
    const StackView v = stack_view(id);
    REQUIRE(v.valid);
    CHECK(std::vector<std::uint64_t>(v.ips.begin(), v.ips.end()) == a);
  }

  TEST_CASE("twenty thousand stacks grow the table and each keeps its own id") {
    REQUIRE(stack_table_init());
    stack_table_reset();
    std::set<std::uint32_t> ids;
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const auto f = frames_for(i, 1 + i % 40);
      const std::uint32_t id = intern_stack_slow(hash_stack(f, false), f, false);
      ids.insert(id);
      // Play the writer: without it the rings would fill after 16,384 stacks.
      if (id != 0) stack_written(id);
    }
    CHECK(ids.size() == 20000);
    CHECK(ids.count(0) == 0);
    for (std::uint64_t i = 0; i < 20000; i += 997) {
      const auto f = frames_for(i, 1 + i % 40);
      CHECK(intern_stack_slow(hash_stack(f, false), f, false) == i + 1);
    }
  }

  TEST_CASE("the thread cache answers a repeated stack with the shared id") {
    REQUIRE(stack_table_init());
    stack_table_reset();
    MappedBuffer mb;
    const auto a = frames_for(11, 27);
    const std::uint32_t first = intern_stack(*mb.buf, a, false);
    CHECK(first == intern_stack(*mb.buf, a, false));
    CHECK(first == intern_stack_slow(hash_stack(a, false), a, false));
  }

  TEST_CASE("a new stack waits for the writer's room and fails only when nobody writes") {
    REQUIRE(stack_table_init());
    stack_table_reset();
    // Without a running writer, the frame ring's 262,144 frames are the limit.
    std::uint32_t last = 0;
    std::uint64_t made = 0;
    for (std::uint64_t i = 0; i < 2000; ++i) {
      const auto f = frames_for(100000 + i, 200);
      last = intern_stack_slow(hash_stack(f, false), f, false);
      if (last == 0) break;
      ++made;
    }
    CHECK(last == 0);
    CHECK(made == (1u << 18) / 200);
    // Once the writer has written them, their room is free again.
    for (std::uint32_t id = 1; id <= made; ++id) {
      CHECK(stack_view(id).ips.size() == 200);
      stack_written(id);
    }
    const auto f = frames_for(999999, 200);
    CHECK(intern_stack_slow(hash_stack(f, false), f, false) == made + 1);
  }

  TEST_CASE("the writer's view of a stack keeps its frames after the ring wrapped") {
    REQUIRE(stack_table_init());
    stack_table_reset();
    for (std::uint64_t i = 0; i < 3000; ++i) {
      const auto f = frames_for(200000 + i, 100 + i % 7);
      const std::uint32_t id = intern_stack_slow(hash_stack(f, false), f, false);
      REQUIRE(id == i + 1);
      const StackView v = stack_view(id);
      CHECK(std::vector<std::uint64_t>(v.ips.begin(), v.ips.end()) == f);
      stack_written(id);
    }
  }
}
