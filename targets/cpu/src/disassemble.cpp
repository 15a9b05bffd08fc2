// The assembly artifact of the cpu target, read back from the object file with LLVM's
// disassembler instead of a second run of the code generator: a cold compile then pays for one
// back-end run, not two (the assembly printer is as slow as the object writer).
//
//   gemm_k0:
//     vbroadcastss (%rdx,%rcx,4), %ymm14
//     vfmadd231ps %ymm13, %ymm14, %ymm0
//     callq 0                              # memset
//
// Labels are the object's symbols (functions); calls and data references name their relocation.
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <mutex>

#include "jit.h"
#include "tilegen/ir/error.h"

namespace tg::cpu {

namespace {

/// LLVM's MC objects for one target, built once per disassembly.
struct Mc {
  std::unique_ptr<llvm::MCRegisterInfo> mri;
  std::unique_ptr<llvm::MCAsmInfo> mai;
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  std::unique_ptr<llvm::MCInstrInfo> mii;
  std::unique_ptr<llvm::MCContext> ctx;
  std::unique_ptr<llvm::MCDisassembler> dis;
  std::unique_ptr<llvm::MCInstPrinter> printer;
};

Mc make_mc(const CpuTarget& t) {
  static std::once_flag once;
  std::call_once(once, [] { llvm::InitializeNativeTargetDisassembler(); });
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!target) throw Error("cpu: " + err);
  Mc m;
  llvm::Triple triple(t.triple);
  m.mri.reset(target->createMCRegInfo(t.triple));
  llvm::MCTargetOptions opts;
  if (m.mri) m.mai.reset(target->createMCAsmInfo(*m.mri, t.triple, opts));
  m.sti.reset(target->createMCSubtargetInfo(t.triple, t.cpu, t.features));
  m.mii.reset(target->createMCInstrInfo());
  if (!m.mri || !m.mai || !m.sti || !m.mii) throw Error("cpu: LLVM has no disassembler for " + t.triple);
  m.ctx = std::make_unique<llvm::MCContext>(triple, m.mai.get(), m.mri.get(), m.sti.get());
  m.dis.reset(target->createMCDisassembler(*m.sti, *m.ctx));
  m.printer.reset(target->createMCInstPrinter(triple, /*AT&T*/ 0, *m.mai, *m.mii, *m.mri));
  if (!m.dis || !m.printer) throw Error("cpu: LLVM has no disassembler for " + t.triple);
  return m;
}

/// One text section: symbols by offset, relocation targets by offset, then the instructions.
void print_section(const llvm::object::ObjectFile& obj, const llvm::object::SectionRef& sec, Mc& mc,
                   llvm::raw_ostream& os) {
  std::map<uint64_t, std::string> labels, relocs;
  for (const llvm::object::SymbolRef& sym : obj.symbols()) {
    auto s = sym.getSection();
    auto name = sym.getName();
    auto addr = sym.getAddress();
    if (s && *s == sec && name && addr && !name->empty()) labels[*addr - sec.getAddress()] = name->str();
    if (!s) llvm::consumeError(s.takeError());
    if (!name) llvm::consumeError(name.takeError());
    if (!addr) llvm::consumeError(addr.takeError());
  }
  for (const llvm::object::SectionRef& rs : obj.sections()) {
    auto target = rs.getRelocatedSection();
    if (!target) {
      llvm::consumeError(target.takeError());
      continue;
    }
    if (*target != sec) continue;
    for (const llvm::object::RelocationRef& r : rs.relocations()) {
      auto sym = r.getSymbol();
      if (sym == obj.symbol_end()) continue;
      auto name = sym->getName();
      if (name)
        relocs[r.getOffset()] = name->str();
      else
        llvm::consumeError(name.takeError());
    }
  }
  auto contents = sec.getContents();
  if (!contents) {
    llvm::consumeError(contents.takeError());
    return;
  }
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t*>(contents->data()), contents->size());
  uint64_t off = 0;
  while (off < bytes.size()) {
    if (auto l = labels.find(off); l != labels.end()) os << l->second << ":\n";
    llvm::MCInst inst;
    uint64_t size = 0;
    if (mc.dis->getInstruction(inst, size, bytes.slice(off), off, llvm::nulls()) !=
            llvm::MCDisassembler::Success ||
        size == 0) {
      os << "\t.byte\t" << unsigned(bytes[off]) << "\n";
      ++off;
      continue;
    }
    std::string text;
    llvm::raw_string_ostream is(text);
    mc.printer->printInst(&inst, off, "", *mc.sti, is);
    os << text;
    // A relocation inside this instruction (a call's target, a constant's address) names it.
    auto r = relocs.lower_bound(off);
    if (r != relocs.end() && r->first < off + size) os << "\t\t# " << r->second;
    os << "\n";
    off += size;
  }
}

}  // namespace

std::string disassemble_object(const std::vector<uint8_t>& object, const CpuTarget& t) {
  auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char*>(object.data()), object.size()), "k.o"));
  if (!obj) {
    std::string why;
    llvm::raw_string_ostream os(why);
    os << obj.takeError();
    throw Error("cpu: the kernel's object file does not read back: " + why);
  }
  Mc mc = make_mc(t);
  std::string out;
  llvm::raw_string_ostream os(out);
  for (const llvm::object::SectionRef& sec : (*obj)->sections()) {
    if (!sec.isText() || sec.getSize() == 0) continue;
    auto name = sec.getName();
    os << "\t.section\t" << (name ? name->str() : std::string("?")) << "\n";
    if (!name) llvm::consumeError(name.takeError());
    print_section(**obj, sec, mc, os);
  }
  return out;
}

}  // namespace tg::cpu
