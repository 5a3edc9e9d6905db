//===- tests/Pte/DistinctBlobsTest.cpp - Blob deduplication --------------===//
#include "Pte/DistinctBlobs.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace exir::pte;

TEST_CASE("DistinctBlobs hashes only blobs of equal size", "[pte][constants]") {
  DistinctBlobs blobs;
  // Unreadable paths prove that nothing is read: distinct sizes never hash,
  // and the same file range matches without reading.
  CHECK(blobs.add(BlobSource::fromFile("/nonexistent/a", 0, 16)) == 0);
  CHECK(blobs.add(BlobSource::fromFile("/nonexistent/a", 64, 32)) == 1);
  CHECK(blobs.add(BlobSource::fromFile("/nonexistent/a", 0, 16)) == 0);
  // Equal sizes compare bytes.
  CHECK(blobs.add(BlobSource::fromBytes("abcd")) == 2);
  CHECK(blobs.add(BlobSource::fromBytes("abce")) == 3);
  CHECK(blobs.add(BlobSource::fromBytes("abcd")) == 2);
  CHECK(blobs.size() == 4);
}
