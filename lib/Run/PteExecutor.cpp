//===- Run/PteExecutor.cpp - Executing a .pte as the runtime does ---------===//
//
// Method::init then Method::execute of the portable runtime: values are parsed
// with the runtime's checks (storage offset 0, no DYNAMIC_UNBOUND, dim order a
// permutation of the rank, planned tensors inside their arena, constants
// inside their buffer), every KernelCall's kernel is resolved before anything
// runs (OperatorMissing lists them all), and the single chain is executed
// with JumpFalse / Move / Free. Boxed lists (IntList, TensorList) are re-read
// from their element values at each call, as the runtime's BoxedEvalueList.
//
//===----------------------------------------------------------------------===//
#include "Ops/OperatorTable.h"
#include "Run/Delegates.h"
#include "Run/Interpreter.h"
#include "Run/Kernel.h"
#include "Run/TensorData.h"
#include "Support/Error.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace exir::run {

namespace {

class PteRun {
public:
  PteRun(const pte::Program &program, const pte::ExecutionPlan &plan, const RunOptions &options)
      : program_(program), plan_(plan), options_(options) {
    for (size_t k = 1; k < plan_.nonConstBufferSizes.size(); ++k) {
      if (plan_.nonConstBufferSizes[k] < 0) throw Error("non_const_buffer_sizes[" + std::to_string(k) + "] is negative");
      arenas_.emplace_back(size_t(plan_.nonConstBufferSizes[k]), options_.poison);
    }
    values_.resize(plan_.values.size());
    for (size_t i = 0; i < plan_.values.size(); ++i) {
      try {
        parseValue(i);
      } catch (Error &e) {
        e.withLocation("/execution_plan/" + plan_.name + "/values/" + std::to_string(i));
        throw;
      }
    }
    resolveKernels();
  }

  void setInputs(const std::vector<Value> &inputs) {
    if (inputs.size() != plan_.inputs.size())
      throw Error("method '" + plan_.name + "' takes " + std::to_string(plan_.inputs.size()) + " inputs, " +
                  std::to_string(inputs.size()) + " were given");
    for (size_t i = 0; i < inputs.size(); ++i) {
      size_t id = checkedIndex(plan_.inputs[i], "input");
      const pte::EValue &ev = plan_.values[id];
      const Value &given = inputs[i];
      if (const auto *t = std::get_if<pte::Tensor>(&ev)) {
        if (!given.isTensor()) throw Error("input " + std::to_string(i) + " takes a tensor, got " + given.kindName());
        const Tensor &in = given.toTensor();
        Tensor &slot = values_[id].toTensor();
        if (in.dtype != slot.dtype)
          throw Error("input " + std::to_string(i) + " has dtype " + shortName(in.dtype) + "; the method takes " +
                      shortName(slot.dtype));
        if (in.sizes.size() != slot.sizes.size())
          throw Error("input " + std::to_string(i) + " has rank " + std::to_string(in.sizes.size()) +
                      "; the method takes rank " + std::to_string(slot.sizes.size()));
        if (t->shapeDynamism == pte::TensorShapeDynamism::Static && in.sizes != slot.sizes)
          throw Error("input " + std::to_string(i) + " has other sizes than the static shape the method takes");
        for (size_t d = 0; d < in.sizes.size(); ++d)
          if (in.sizes[d] > t->sizes[d])
            throw Error("input " + std::to_string(i) + " has size " + std::to_string(in.sizes[d]) + " in dim " +
                        std::to_string(d) + "; the upper bound is " + std::to_string(t->sizes[d]));
        bool planned = t->allocationInfo || t->dataBufferIdx != 0;
        if (planned) {
          copyTensorInto(slot, in, "input " + std::to_string(i)); // set_input copies into planned memory
        } else {
          Tensor alias = contiguousCopy(in); // the runtime aliases the caller's buffer
          alias.dimOrder = slot.dimOrder;
          copyTensorInto(alias, in, "input " + std::to_string(i));
          slot = std::move(alias);
        }
        continue;
      }
      if (given.isTensor()) throw Error("input " + std::to_string(i) + " takes a scalar, got a tensor");
      values_[id] = given;
    }
  }

  void execute() {
    if (plan_.chains.empty()) throw Error("method '" + plan_.name + "' has no chain");
    const pte::Chain &chain = plan_.chains[0];
    uint64_t executed = 0;
    for (size_t pc = 0; pc < chain.instructions.size();) {
      if (++executed > options_.maxInstructions)
        throw Error("more than " + std::to_string(options_.maxInstructions) + " instructions executed (a JumpFalse loop?)");
      size_t next = pc + 1;
      try {
        next = step(chain.instructions[pc], pc);
      } catch (Error &e) {
        e.withLocation("/execution_plan/" + plan_.name + "/chains/0/instructions/" + std::to_string(pc));
        throw;
      }
      pc = next;
    }
  }

  std::vector<Value> outputs() const {
    std::vector<Value> out;
    for (int32_t id : plan_.outputs) {
      const Value &v = values_.at(checkedIndex(id, "output"));
      out.push_back(v.isTensor() ? Value::of(contiguousCopy(v.toTensor())) : v);
    }
    return out;
  }

private:
  size_t checkedIndex(int64_t id, const char *what) const {
    if (id < 0 || size_t(id) >= plan_.values.size())
      throw Error(std::string(what) + " value index " + std::to_string(id) + " is out of range (" +
                  std::to_string(plan_.values.size()) + " values)");
    return size_t(id);
  }

  void parseValue(size_t i) {
    const pte::EValue &ev = plan_.values[i];
    Value &v = values_[i];
    switch (ev.index()) {
    case 0: throw Error("value has no type (NONE)");
    case 1: v = Value::none(); return;
    case 2: v = Value::of(std::get<pte::Int>(ev).intVal); return;
    case 3: v = Value::of(std::get<pte::Bool>(ev).boolVal); return;
    case 4: v = Value::of(std::get<pte::Double>(ev).doubleVal); return;
    case 5: v = Value::of(parseTensor(std::get<pte::Tensor>(ev), i)); return;
    case 6: v.v = std::get<pte::String>(ev).stringVal; return;
    case 7: for (int64_t id : std::get<pte::IntList>(ev).items) checkedIndex(id, "IntList item"); return;
    case 8: v.v = std::get<pte::DoubleList>(ev).items; return;
    case 9: v.v = std::get<pte::BoolList>(ev).items; return;
    case 10:
      for (int32_t id : std::get<pte::TensorList>(ev).items)
        if (size_t(checkedIndex(id, "TensorList item")) >= i || !values_[size_t(id)].isTensor())
          throw Error("TensorList item " + std::to_string(id) + " is not an earlier Tensor value");
      return;
    case 11:
      for (int32_t id : std::get<pte::OptionalTensorList>(ev).items)
        if (id != -1 && (size_t(checkedIndex(id, "OptionalTensorList item")) >= i || !values_[size_t(id)].isTensor()))
          throw Error("OptionalTensorList item " + std::to_string(id) + " is not an earlier Tensor value");
      return;
    default: throw Error("value of unknown type " + std::to_string(ev.index()));
    }
  }

  Tensor parseTensor(const pte::Tensor &p, size_t index) {
    if (p.storageOffset != 0) throw Error("tensor storage_offset must be 0 (NotSupported)");
    if (elementSize(p.scalarType) == 0) throw Error("tensor has an invalid scalar type");
    if (p.shapeDynamism == pte::TensorShapeDynamism::DynamicUnbound)
      throw Error("DYNAMIC_UNBOUND tensors are not supported by the portable runtime (NotSupported)");
    if (p.dimOrder.size() != p.sizes.size())
      throw Error("tensor dim_order has " + std::to_string(p.dimOrder.size()) + " entries for rank " +
                  std::to_string(p.sizes.size()));
    if (p.sizes.size() > 16) throw Error("tensor rank " + std::to_string(p.sizes.size()) + " exceeds 16");
    std::vector<bool> seen(p.sizes.size());
    for (uint8_t d : p.dimOrder) {
      if (d >= p.sizes.size() || seen[d]) throw Error("tensor dim_order is not a permutation of 0..rank-1");
      seen[d] = true;
    }
    if (p.extraTensorInfo && p.extraTensorInfo->location == pte::TensorDataLocation::External)
      throw Error("tensor '" + p.extraTensorInfo->fullyQualifiedName.value_or("?") +
                  "' is an external constant (in a .ptd file), which exir-run does not read");
    Tensor t;
    t.dtype = p.scalarType;
    for (int32_t s : p.sizes) {
      if (s < 0) throw Error("tensor has a negative size");
      t.sizes.push_back(s);
    }
    t.dimOrder = p.dimOrder;
    size_t nbytes = t.nbytes();
    if (p.allocationInfo) {
      uint32_t memId = p.allocationInfo->memoryId;
      uint64_t offset = p.allocationInfo->offset();
      if (memId == 0 || memId - 1 >= arenas_.size())
        throw Error("tensor is planned in memory_id " + std::to_string(memId) + ", but the method has " +
                    std::to_string(arenas_.size()) + " planned buffers (InvalidArgument)");
      auto &arena = arenas_[memId - 1];
      if (offset + nbytes > arena.size())
        throw Error("planned tensor of " + std::to_string(nbytes) + " bytes at offset " + std::to_string(offset) +
                    " does not fit in buffer " + std::to_string(memId) + " of " + std::to_string(arena.size()) +
                    " bytes (MemoryAllocationFailed)");
      t.data = arena.data() + offset;
      t.capacity = nbytes;
      if (p.dataBufferIdx != 0) {
        if (p.dataBufferIdx >= program_.mutableData.size())
          throw Error("planned tensor's initial data index " + std::to_string(p.dataBufferIdx) + " is out of range");
        std::string bytes = program_.mutableData[p.dataBufferIdx].bytes();
        if (bytes.size() < nbytes) throw Error("planned tensor's initial data is shorter than the tensor");
        std::memcpy(t.data, bytes.data(), nbytes);
      }
      return t;
    }
    if (p.dataBufferIdx != 0) {
      if (p.dataBufferIdx >= program_.constants.size())
        throw Error("constant index " + std::to_string(p.dataBufferIdx) + " is out of range (" +
                    std::to_string(program_.constants.size()) + " constant buffers)");
      const pte::BlobSource &blob = program_.constants[p.dataBufferIdx];
      if (blob.size() < nbytes)
        throw Error("constant buffer " + std::to_string(p.dataBufferIdx) + " has " + std::to_string(blob.size()) +
                    " bytes; the tensor needs " + std::to_string(nbytes));
      Tensor c = Tensor::make(t.dtype, t.sizes);
      c.dimOrder = t.dimOrder;
      std::string bytes = blob.bytes();
      if (nbytes) std::memcpy(c.data, bytes.data(), nbytes);
      c.growable = false;
      return c;
    }
    // Neither planned nor constant: an input the caller provides, or an output
    // buffer the caller must set (set_output_data_ptr); we give those owned
    // memory of the declared size. Anything else has no memory in the runtime.
    bool boundary = std::find(plan_.inputs.begin(), plan_.inputs.end(), int32_t(index)) != plan_.inputs.end() ||
                    std::find(plan_.outputs.begin(), plan_.outputs.end(), int32_t(index)) != plan_.outputs.end();
    if (!boundary && nbytes > 0)
      throw Error("tensor of " + std::to_string(nbytes) +
                  " bytes is neither planned, a constant, an input nor an output: the runtime gives it no memory");
    Tensor owned = Tensor::make(t.dtype, t.sizes);
    owned.dimOrder = t.dimOrder;
    owned.growable = false;
    return owned;
  }

  void resolveKernels() {
    const OperatorTable &table = OperatorTable::builtin();
    std::set<std::string> missing;
    size_t missingCount = 0;
    kernels_.assign(plan_.operators.size(), nullptr);
    for (size_t i = 0; i < plan_.operators.size(); ++i)
      kernels_[i] = KernelRegistry::global().find(plan_.operators[i].qualifiedName());
    for (const auto &chain : plan_.chains)
      for (size_t pc = 0; pc < chain.instructions.size(); ++pc) {
        const auto *call = std::get_if<pte::KernelCall>(&chain.instructions[pc]);
        if (!call) continue;
        std::string where = "/execution_plan/" + plan_.name + "/chains/0/instructions/" + std::to_string(pc);
        if (call->opIndex < 0 || size_t(call->opIndex) >= plan_.operators.size())
          throw Error("op_index " + std::to_string(call->opIndex) + " is out of range", {}, where);
        for (int32_t a : call->args)
          if (a < 0 || size_t(a) >= plan_.values.size())
            throw Error("argument index " + std::to_string(a) + " is out of range", {}, where);
        const pte::Operator &op = plan_.operators[size_t(call->opIndex)];
        if (!kernels_[size_t(call->opIndex)]) {
          missing.insert(op.qualifiedName());
          ++missingCount;
          continue;
        }
        // The codegen'd wrappers check stack.size() == num_schema_args + 1.
        if (const OpSchema *schema = table.lookup(op.qualifiedName())) {
          size_t expected = schema->arguments.size() + 1;
          if (call->args.size() != expected)
            throw Error("KernelCall of " + op.qualifiedName() + " has " + std::to_string(call->args.size()) +
                            " arguments; its schema takes " + std::to_string(schema->arguments.size()) +
                            " plus the return slot",
                        {}, where);
        }
      }
    if (missingCount) {
      std::string names;
      for (const auto &n : missing) names += (names.empty() ? "" : ", ") + n;
      throw Error(std::to_string(missingCount) + " instructions have no registered kernel (OperatorMissing): " + names);
    }
  }

  /// The runtime's boxed lists read their elements at call time.
  void refreshList(size_t id) {
    const pte::EValue &ev = plan_.values[id];
    if (const auto *l = std::get_if<pte::IntList>(&ev)) {
      std::vector<int64_t> ints;
      for (int64_t item : l->items) ints.push_back(values_[size_t(item)].toInt());
      values_[id].v = std::move(ints);
    } else if (const auto *tl = std::get_if<pte::TensorList>(&ev)) {
      Value::TensorList list;
      for (int32_t item : tl->items) list.push_back(&values_[size_t(item)].toTensor());
      values_[id].v = std::move(list);
    } else if (const auto *ol = std::get_if<pte::OptionalTensorList>(&ev)) {
      Value::OptionalTensorList list;
      for (int32_t item : ol->items) list.push_back(item < 0 ? nullptr : &values_[size_t(item)].toTensor());
      values_[id].v = std::make_pair(std::move(list), 0);
    }
  }

  size_t step(const pte::Instruction &instr, size_t pc) {
    switch (instr.index()) {
    case 1: {
      const auto &call = std::get<pte::KernelCall>(instr);
      std::vector<Value *> args;
      for (int32_t a : call.args) {
        refreshList(size_t(a));
        args.push_back(&values_[size_t(a)]);
      }
      (*kernels_[size_t(call.opIndex)])(std::span<Value *>(args));
      return pc + 1;
    }
    case 2: {
      const auto &call = std::get<pte::DelegateCall>(instr);
      if (call.delegateIndex < 0 || size_t(call.delegateIndex) >= plan_.delegates.size())
        throw Error("delegate_index " + std::to_string(call.delegateIndex) + " is out of range");
      const pte::BackendDelegate &d = plan_.delegates[size_t(call.delegateIndex)];
      if (!isKnownBackend(d.id))
        throw Error("backend '" + d.id + "' is not available in exir-run, and a .pte does not keep the original subgraph");
      std::vector<Value *> args;
      for (int32_t a : call.args) {
        size_t id = checkedIndex(a, "DelegateCall argument");
        refreshList(id);
        args.push_back(&values_[id]);
      }
      std::vector<CompileSpec> specs;
      for (const auto &cs : d.compileSpecs) specs.push_back(CompileSpec{cs.key, cs.value});
      runBackendBlob(d.id, d.processedData.bytes(), specs, std::span<Value *>(args), options_);
      return pc + 1;
    }
    case 3: {
      const auto &move = std::get<pte::MoveCall>(instr);
      values_[checkedIndex(move.moveTo, "MoveCall destination")] = values_[checkedIndex(move.moveFrom, "MoveCall source")];
      return pc + 1;
    }
    case 4: {
      const auto &jf = std::get<pte::JumpFalseCall>(instr);
      const Value &cond = values_[checkedIndex(jf.condValueIndex, "JumpFalseCall condition")];
      bool fallThrough;
      if (cond.isBool()) {
        fallThrough = cond.toBool();
      } else if (cond.isTensor() && cond.toTensor().dtype == ScalarType::Bool) {
        fallThrough = true;
        for (double x : toDoubles(cond.toTensor())) fallThrough &= x != 0;
      } else {
        throw Error(std::string("JumpFalseCall condition is ") + cond.kindName() + ", not a Bool or a bool tensor");
      }
      if (fallThrough) return pc + 1;
      if (jf.destinationInstruction < 0) throw Error("JumpFalseCall destination is negative");
      return size_t(jf.destinationInstruction);
    }
    case 5: {
      const auto &fc = std::get<pte::FreeCall>(instr);
      if (!values_[checkedIndex(fc.valueIndex, "FreeCall value")].isTensor()) throw Error("FreeCall of a non-tensor value");
      return pc + 1;
    }
    default: throw Error("instruction of unknown type " + std::to_string(instr.index()));
    }
  }

  const pte::Program &program_;
  const pte::ExecutionPlan &plan_;
  const RunOptions &options_;
  std::vector<std::vector<uint8_t>> arenas_; // [mem_id - 1]
  std::vector<Value> values_;
  std::vector<const KernelFn *> kernels_;
};

class PteExecutable final : public Executable {
public:
  explicit PteExecutable(pte::Program program) : program_(std::move(program)) {}
  std::string kind() const override { return ".pte"; }
  std::vector<std::string> methods() const override {
    std::vector<std::string> names;
    for (const auto &p : program_.executionPlan) names.push_back(p.name);
    return names;
  }
  std::vector<InputInfo> inputs(const std::string &method) const override {
    const pte::ExecutionPlan &plan = find(method);
    std::vector<InputInfo> infos;
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      InputInfo info;
      info.name = "input" + std::to_string(i);
      int32_t id = plan.inputs[i];
      if (id < 0 || size_t(id) >= plan.values.size()) throw Error("input value index out of range");
      const pte::EValue &ev = plan.values[size_t(id)];
      if (const auto *t = std::get_if<pte::Tensor>(&ev)) {
        info.dtype = t->scalarType;
        info.sizes.assign(t->sizes.begin(), t->sizes.end());
        info.dimOrder = t->dimOrder;
        info.dynamic = t->shapeDynamism != pte::TensorShapeDynamism::Static;
      } else {
        info.isTensor = false;
        if (const auto *d = std::get_if<pte::Double>(&ev)) info.scalar = Value::of(d->doubleVal);
        else if (const auto *b = std::get_if<pte::Bool>(&ev)) info.scalar = Value::of(b->boolVal);
        else if (const auto *n = std::get_if<pte::Int>(&ev)) info.scalar = Value::of(n->intVal);
      }
      infos.push_back(std::move(info));
    }
    return infos;
  }
  RunResult run(const std::string &method, const std::vector<Value> &inputs, const RunOptions &options) override {
    PteRun run(program_, find(method), options);
    run.setInputs(inputs);
    run.execute();
    RunResult result;
    result.outputs = run.outputs();
    return result;
  }

private:
  const pte::ExecutionPlan &find(const std::string &method) const {
    auto index = program_.findPlan(method);
    if (!index) throw Error("the program has no method '" + method + "'");
    return program_.executionPlan[*index];
  }
  pte::Program program_;
};

} // namespace

std::unique_ptr<Executable> makePteExecutable(pte::Program program) {
  return std::make_unique<PteExecutable>(std::move(program));
}

} // namespace exir::run
