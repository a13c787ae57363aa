#include "import/spec.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "format/model.h"
#include "format/tensor_roles.h"
#include "import/error.h"
#include "kernels/qs8_packed_gemm.h"
#include "quantize/quantize.h"

namespace octet {
namespace convert {
namespace {

using Shape = std::vector<uint32_t>;
using Required = std::vector<std::pair<std::string, Shape>>;

uint64_t Numel(const Shape& shape) {
  uint64_t n = 1;
  for (uint32_t d : shape) n *= d;
  return n;
}

}  // namespace

Required RequiredTensors(const fb::ArchitectureT& a) {
  Required out;
  const RoleArch roles = RoleArchOf(a);
  ForEachRequiredTensor(roles, [&](const RoleInfo& role, LayerStack stack, uint32_t layer) {
    char name[kMaxTensorNameLength];
    if (!RoleTensorName(name, sizeof(name), role, stack, layer)) {
      Fail("internal: tensor name for layer ", layer, " too long");
    }
    const RoleShape shape = ShapeOf(role, roles);
    out.push_back({name, Shape(shape.dims, shape.dims + shape.rank)});
  });
  return out;
}

namespace {

// The source's index of the first value of an untransposed mapping's row block.
uint64_t FirstValue(const TensorMapping& m) {
  const uint64_t numel = Numel(m.shape);
  const uint64_t row = m.shape.empty() || m.shape[0] == 0 ? 0 : numel / m.shape[0];
  return numel * m.part + uint64_t{m.first_row} * row;
}

}  // namespace

std::vector<uint64_t> TensorMapping::ExpectedSourceShape() const {
  if (!source_shape.empty()) return source_shape;
  std::vector<uint64_t> s(shape.begin(), shape.end());
  if (transpose && s.size() == 2) std::swap(s[0], s[1]);
  // The fused parts sit along the output features: rows, or columns of a transposed source.
  s[transpose && s.size() == 2 ? 1 : 0] *= parts;
  return s;
}

TensorMapping& ModelSpec::Map(const std::string& name, std::vector<uint32_t> shape,
                              const std::string& source) {
  TensorMapping m;
  m.name = name;
  m.shape = std::move(shape);
  m.source = source;
  tensors.push_back(std::move(m));
  return tensors.back();
}

void ModelSpec::RequireDuplicate(const std::string& source, const std::string& same_as,
                                 const std::string& why) {
  const std::string type = model_type;
  extra_checks.push_back(
      {source, [type, source, same_as, why](const Checkpoint& c, const Tensor& t) {
         const Tensor* other = c.Find(same_as);
         if (other == nullptr) Fail(type, ": internal: ", same_as, " is missing");
         bool same = t.shape == other->shape;
         if (same) {
           const std::vector<float> a = Checkpoint::ReadAllF32(t);
           const std::vector<float> b = Checkpoint::ReadAllF32(*other);
           same = std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
         }
         if (!same) {
           Fail(type, ": tensor ", source, " differs from ", same_as, " (", why, ")");
         }
       }});
}

void ModelSpec::Validate(const Checkpoint& checkpoint) const {
  // 1. The importer mapped exactly what the architecture needs.
  std::map<std::string, const TensorMapping*> mapped;
  for (const TensorMapping& m : tensors) {
    if (!mapped.emplace(m.name, &m).second) {
      Fail(model_type, ": internal: canonical tensor ", m.name, " mapped twice");
    }
  }
  const Required required = RequiredTensors(architecture);
  std::set<std::string> required_names;
  for (const auto& [name, shape] : required) {
    required_names.insert(name);
    const auto it = mapped.find(name);
    if (it == mapped.end()) Fail(model_type, ": internal: nothing maps to ", name);
    if (it->second->shape != shape) {
      Fail(model_type, ": internal: ", name, " mapped as ", ShapeString(it->second->shape),
           ", the architecture needs ", ShapeString(shape));
    }
  }
  for (const TensorMapping& m : tensors) {
    if (required_names.count(m.name) == 0) {
      Fail(model_type, ": internal: ", m.name, " is not part of this architecture");
    }
    if (m.transpose && m.shape.size() != 2) {
      Fail(model_type, ": internal: transposed tensor ", m.name, " is not a matrix");
    }
    if (m.parts == 0 || m.part >= m.parts) {
      Fail(model_type, ": internal: ", m.name, " is part ", m.part, " of ", m.parts);
    }
    if (m.first_row != 0 &&
        (m.transpose || m.parts != 1 || m.source_shape.empty() || m.shape.empty() ||
         m.source_shape.size() != m.shape.size() ||
         uint64_t{m.first_row} + m.shape[0] > m.source_shape[0] ||
         !std::equal(m.shape.begin() + 1, m.shape.end(), m.source_shape.begin() + 1))) {
      Fail(model_type, ": internal: ", m.name, " is not a row block of ",
           ShapeString(m.source_shape));
    }
    if (m.source.empty() && m.values.size() != Numel(m.shape)) {
      Fail(model_type, ": internal: computed tensor ", m.name, " has ", m.values.size(),
           " values for shape ", ShapeString(m.shape));
    }
  }

  // 2. Every source is present, float, and shaped as expected.
  std::set<std::string> used;
  for (const TensorMapping& m : tensors) {
    if (m.source.empty()) continue;
    used.insert(m.source);
    const std::vector<uint64_t> expected = m.ExpectedSourceShape();
    const Tensor* t = checkpoint.Find(m.source);
    if (t == nullptr) {
      Fail(model_type, ": missing tensor ", m.source, " (-> ", m.name, ") ", ShapeString(expected));
    }
    if (t->shape != expected) {
      Fail(model_type, ": tensor ", m.source, " (-> ", m.name, ") is ", ShapeString(t->shape),
           ", expected ", ShapeString(expected));
    }
    if (!t->IsFloat()) {
      Fail(model_type, ": tensor ", m.source, " in ", t->file, " is ", t->dtype,
           "; octet-convert reads F32, F16 and BF16 tensors");
    }
  }

  // 3. Nothing else in the checkpoint goes unaccounted for.
  for (const ExtraCheck& e : extra_checks) used.insert(e.source);
  std::vector<std::string> unexpected;
  for (const Tensor* t : checkpoint.All()) {
    if (used.count(t->name) == 0 && !ignore(t->name)) unexpected.push_back(t->name);
  }
  if (!unexpected.empty()) {
    std::string list;
    for (size_t i = 0; i < unexpected.size() && i < 3; ++i) {
      list += (i ? ", " : "") + unexpected[i];
    }
    if (unexpected.size() > 3) list += Cat(" and ", unexpected.size() - 3, " more");
    Fail(model_type, ": the checkpoint has tensors that are not part of the ", model_type,
         " architecture: ", list);
  }

  // 4. Extras that must agree with what the model uses.
  for (const ExtraCheck& e : extra_checks) {
    if (const Tensor* t = checkpoint.Find(e.source)) {
      if (!t->IsFloat()) {
        Fail(model_type, ": tensor ", e.source, " in ", t->file, " is ", t->dtype,
             "; octet-convert reads F32, F16 and BF16 tensors");
      }
      e.check(checkpoint, *t);
    }
  }
}

std::vector<float> ModelSpec::ReadValues(const TensorMapping& m, const Checkpoint& checkpoint) {
  if (m.source.empty()) return m.values;
  std::vector<float> out(Numel(m.shape));
  ReadValuesInto(m, checkpoint, out.data());
  return out;
}

void ModelSpec::ReadValuesInto(const TensorMapping& m, const Checkpoint& checkpoint, float* out) {
  const uint64_t numel = Numel(m.shape);
  if (m.source.empty()) {
    if (m.values.size() != numel) Fail("internal: ", m.name, " has the wrong number of values");
    std::copy(m.values.begin(), m.values.end(), out);
    return;
  }
  const Tensor& t = *checkpoint.Find(m.source);
  if (!m.rows.empty()) {  // a gather of whole rows
    const uint64_t cols = numel / m.rows.size();
    uint64_t source_cols = 1;
    for (size_t d = 1; d < m.source_shape.size(); ++d) source_cols *= m.source_shape[d];
    if (m.transpose || m.parts != 1 || m.first_row != 0 || m.shape.empty() ||
        m.shape[0] != m.rows.size() || m.source_shape.empty() || source_cols != cols) {
      Fail("internal: ", m.name, " is not a gather of rows of ", ShapeString(m.source_shape));
    }
    for (size_t i = 0; i < m.rows.size(); ++i) {
      if (m.rows[i] >= m.source_shape[0]) {
        Fail("internal: ", m.name, ": row ", m.rows[i], " of ", ShapeString(m.source_shape));
      }
      Checkpoint::ReadF32(t, uint64_t{m.rows[i]} * cols, cols, out + i * cols);
    }
    if (m.add != 0.0f) {
      for (uint64_t i = 0; i < numel; ++i) out[i] += m.add;
    }
    return;
  }
  if (!m.transpose) {
    Checkpoint::ReadF32(t, FirstValue(m), numel, out);  // a contiguous row block
    if (m.add != 0.0f) {
      for (uint64_t i = 0; i < numel; ++i) out[i] += m.add;
    }
    return;
  }
  // Source [in, parts * out]: out[r][c] = source[c][part * out + r].
  const uint64_t rows = m.shape[0], cols = m.shape[1];
  const uint64_t stride = rows * m.parts, offset = rows * m.part;
  const std::vector<float> source = Checkpoint::ReadAllF32(t);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) {
      out[r * cols + c] = source[c * stride + offset + r] + m.add;
    }
  }
}

void ModelSpec::ReadRowsInto(const TensorMapping& m, const Checkpoint& checkpoint, uint64_t row0,
                             uint64_t rows, float* out) {
  if (m.shape.size() != 2 || row0 + rows > m.shape[0]) {
    Fail("internal: rows ", row0, "..", row0 + rows, " of ", m.name, " ", ShapeString(m.shape));
  }
  const uint64_t cols = m.shape[1];
  if (m.source.empty() || m.transpose) {  // from the whole tensor
    const std::vector<float> all = ReadValues(m, checkpoint);
    std::copy(all.begin() + row0 * cols, all.begin() + (row0 + rows) * cols, out);
    return;
  }
  const Tensor& t = *checkpoint.Find(m.source);
  if (!m.rows.empty()) {
    for (uint64_t i = 0; i < rows; ++i) {
      Checkpoint::ReadF32(t, uint64_t{m.rows[row0 + i]} * cols, cols, out + i * cols);
    }
  } else {
    Checkpoint::ReadF32(t, FirstValue(m) + row0 * cols, rows * cols, out);
  }
  if (m.add != 0.0f) {
    for (uint64_t i = 0; i < rows * cols; ++i) out[i] += m.add;
  }
}

std::vector<ModelSpec::TensorError> ModelSpec::Emit(const Checkpoint& checkpoint,
                                                    ModelWriter& writer, bool int8,
                                                    const QuantOverrides* overrides,
                                                    bool hold_int8) const {
  std::vector<TensorError> errors;
  for (const TensorMapping& m : tensors) {
    const std::vector<float>* replaced = nullptr;
    if (overrides != nullptr) {
      const auto it = overrides->values.find(m.name);
      if (it != overrides->values.end()) {
        if (it->second.size() != Numel(m.shape)) {
          Fail("internal: the tuned values of ", m.name, " have the wrong size");
        }
        replaced = &it->second;
      }
    }
    const bool keep_f32 = overrides != nullptr && overrides->keep_f32.count(m.name) > 0;
    const RoleStorage storage = RoleOf(m.name).storage;
    // A decoder's tied embedding is its head too: every step reads all of it
    // as a product, so it is packed like the head (its looked-up rows are
    // gathered from the tiles).
    const bool tied_table = RoleOf(m.name).role == Role::kTokenEmbedding &&
                            architecture.tied_embeddings &&
                            architecture.structure != fb::Structure::EncoderOnly;
    const bool packed = storage == RoleStorage::kProduct || tied_table;
    if (int8 && !keep_f32 && storage != RoleStorage::kF32) {
      const QuantizedMatrix* tuned = nullptr;
      if (overrides != nullptr) {
        const auto it = overrides->int8.find(m.name);
        if (it != overrides->int8.end()) tuned = &it->second;
      }
      QuantizedMatrix rounded;
      if (tuned == nullptr && !hold_int8) {
        // Rounded again at write time; only the scales now (the header's).
        QuantParams quant;
        quant.scheme = fb::QuantScheme::PerChannel;
        quant.axis = 0;
        if (replaced != nullptr) {
          quant.scales = QuantizeRows(replaced->data(), m.shape[0], m.shape[1], false).scales;
        } else {  // a block of rows at a time, as the producers below read them
          constexpr uint64_t kBlockRows = 1024;
          const uint64_t n = m.shape[0], k = m.shape[1];
          std::vector<float> rows(std::min<uint64_t>(n, kBlockRows) * k);
          for (uint64_t r0 = 0; r0 < n; r0 += kBlockRows) {
            const uint64_t count = std::min<uint64_t>(kBlockRows, n - r0);
            ReadRowsInto(m, checkpoint, r0, count, rows.data());
            const std::vector<float> s = QuantizeRows(rows.data(), count, k, false).scales;
            quant.scales.insert(quant.scales.end(), s.begin(), s.end());
          }
        }
        const uint32_t n = m.shape[0], k = m.shape[1];
        auto round = [&m, &checkpoint, replaced]() {
          const std::vector<float> values = replaced ? *replaced : ReadValues(m, checkpoint);
          return QuantizeRows(values.data(), m.shape[0], m.shape[1], false);
        };
        if (packed && replaced == nullptr) {
          // Rounded and packed a block of rows at a time (per-row scales:
          // the same bytes), so a table of the largest size is never whole in
          // fp32 here.
          writer.AddPackedQs8Producer(
              m.name, m.shape, qs8_pack_weights_size(n, k),
              [&m, &checkpoint, n, k](void* out) {
                constexpr uint64_t kBlockRows = 64 * kQs8PackedNr;
                std::vector<float> rows(std::min<uint64_t>(n, kBlockRows) * k);
                const size_t tile_bytes = qs8_packed_tile_bytes(k);
                for (uint64_t r0 = 0; r0 < n; r0 += kBlockRows) {
                  const uint64_t count = std::min<uint64_t>(kBlockRows, n - r0);
                  ReadRowsInto(m, checkpoint, r0, count, rows.data());
                  const QuantizedMatrix q = QuantizeRows(rows.data(), count, k, false);
                  qs8_pack_weights__ref(count, k, q.values.data(), k,
                                        static_cast<int8_t*>(out) + r0 / kQs8PackedNr * tile_bytes);
                }
              },
              std::move(quant));
        } else if (packed) {
          writer.AddPackedQs8Producer(m.name, m.shape, qs8_pack_weights_size(n, k),
                                      [round, n, k](void* out) {
                                        const QuantizedMatrix q = round();
                                        qs8_pack_weights__ref(n, k, q.values.data(), k,
                                                              static_cast<int8_t*>(out));
                                      },
                                      std::move(quant));
        } else {
          writer.AddTensorProducer(m.name, fb::DType::I8, m.shape,
                                   [round](void* out) {
                                     const QuantizedMatrix q = round();
                                     std::copy(q.values.begin(), q.values.end(),
                                               static_cast<int8_t*>(out));
                                   },
                                   std::move(quant));
        }
        if (overrides != nullptr && overrides->wide_input.count(m.name) > 0) {
          writer.SetInputBits(m.name, 16);
        }
        continue;
      }
      if (tuned == nullptr) {
        const std::vector<float> values = replaced ? *replaced : ReadValues(m, checkpoint);
        rounded = QuantizeRows(values.data(), m.shape[0], m.shape[1]);
      } else if (tuned->values.size() != Numel(m.shape) || tuned->scales.size() != m.shape[0]) {
        Fail("internal: the tuned int8 values of ", m.name, " have the wrong size");
      }
      const QuantizedMatrix& q = tuned != nullptr ? *tuned : rounded;
      QuantParams quant;
      quant.scheme = fb::QuantScheme::PerChannel;
      quant.axis = 0;
      quant.scales = q.scales;
      if (packed) {
        // Linear layers and the head: in the int8 GEMM's packed tiles, so the
        // runtime maps them as they are (kernels/qs8_packed_gemm.h). A tuned
        // matrix is packed as the file is written (the overrides outlive it);
        // a rounded one is held packed.
        const uint32_t n = m.shape[0], k = m.shape[1];
        if (tuned != nullptr) {
          writer.AddPackedQs8Producer(m.name, m.shape, qs8_pack_weights_size(n, k),
                                      [tuned, n, k](void* out) {
                                        qs8_pack_weights__ref(n, k, tuned->values.data(), k,
                                                              static_cast<int8_t*>(out));
                                      },
                                      std::move(quant));
        } else {
          std::vector<int8_t> tiles(qs8_pack_weights_size(n, k));
          qs8_pack_weights__ref(n, k, q.values.data(), k, tiles.data());
          writer.AddPackedQs8Copy(m.name, m.shape, tiles.data(), tiles.size(), std::move(quant));
        }
      } else {
        writer.AddTensorCopy(m.name, fb::DType::I8, m.shape, q.values.data(), std::move(quant));
      }
      if (overrides != nullptr && overrides->wide_input.count(m.name) > 0) {
        writer.SetInputBits(m.name, 16);
      }
      errors.push_back({m.name, q.sqnr_db, q.sqnr_block32_db});
      continue;
    }
    if (replaced != nullptr) {
      writer.AddTensor(m.name, fb::DType::F32, m.shape, replaced->data());
      continue;
    }
    if (m.source.empty()) {
      writer.AddTensor(m.name, fb::DType::F32, m.shape, m.values.data());
      continue;
    }
    // Read as the writer reaches it (Checkpoint::ReadF32 releases the pages it
    // read), so neither the checkpoint nor the converted tensors pile up.
    writer.AddTensorProducer(m.name, fb::DType::F32, m.shape, [&m, &checkpoint](void* out) {
      ReadValuesInto(m, checkpoint, static_cast<float*>(out));
    });
  }
  return errors;
}

}  // namespace convert
}  // namespace octet
