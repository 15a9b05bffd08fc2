// The SPIR-V numbers tilegen emits (from the SPIR-V 1.6 and GLSL.std.450 specifications; the
// spirv-headers package is not a build dependency). Only what the code generator uses.
#pragma once
#include <cstdint>

namespace tg::vulkan::spv {

enum Op : uint32_t {
  OpNop = 0,
  OpName = 5,
  OpExtension = 10,
  OpExtInstImport = 11,
  OpExtInst = 12,
  OpMemoryModel = 14,
  OpEntryPoint = 15,
  OpExecutionMode = 16,
  OpCapability = 17,
  OpTypeVoid = 19,
  OpTypeBool = 20,
  OpTypeInt = 21,
  OpTypeFloat = 22,
  OpTypeVector = 23,
  OpTypeArray = 28,
  OpTypeRuntimeArray = 29,
  OpTypeStruct = 30,
  OpTypePointer = 32,
  OpTypeFunction = 33,
  OpConstantTrue = 41,
  OpConstantFalse = 42,
  OpConstant = 43,
  OpConstantComposite = 44,
  OpConstantNull = 46,
  OpFunction = 54,
  OpFunctionEnd = 56,
  OpVariable = 59,
  OpLoad = 61,
  OpStore = 62,
  OpAccessChain = 65,
  OpDecorate = 71,
  OpMemberDecorate = 72,
  OpVectorExtractDynamic = 77,
  OpCompositeConstruct = 80,
  OpCompositeExtract = 81,
  OpConvertFToU = 109,
  OpConvertFToS = 110,
  OpConvertSToF = 111,
  OpConvertUToF = 112,
  OpUConvert = 113,
  OpSConvert = 114,
  OpFConvert = 115,
  OpBitcast = 124,
  OpSNegate = 126,
  OpFNegate = 127,
  OpIAdd = 128,
  OpFAdd = 129,
  OpISub = 130,
  OpFSub = 131,
  OpIMul = 132,
  OpFMul = 133,
  OpUDiv = 134,
  OpSDiv = 135,
  OpFDiv = 136,
  OpUMod = 137,
  OpSRem = 138,
  OpSMod = 139,
  OpIsNan = 156,
  OpLogicalEqual = 164,
  OpLogicalNotEqual = 165,
  OpLogicalOr = 166,
  OpLogicalAnd = 167,
  OpLogicalNot = 168,
  OpSelect = 169,
  OpIEqual = 170,
  OpINotEqual = 171,
  OpUGreaterThan = 172,
  OpSGreaterThan = 173,
  OpUGreaterThanEqual = 174,
  OpSGreaterThanEqual = 175,
  OpULessThan = 176,
  OpSLessThan = 177,
  OpULessThanEqual = 178,
  OpSLessThanEqual = 179,
  OpFOrdEqual = 180,
  OpFUnordNotEqual = 183,
  OpFOrdLessThan = 184,
  OpFOrdGreaterThan = 186,
  OpFOrdLessThanEqual = 188,
  OpFOrdGreaterThanEqual = 190,
  OpShiftRightLogical = 194,
  OpShiftRightArithmetic = 195,
  OpShiftLeftLogical = 196,
  OpBitwiseOr = 197,
  OpBitwiseXor = 198,
  OpBitwiseAnd = 199,
  OpNot = 200,
  OpBitFieldSExtract = 202,
  OpBitFieldUExtract = 203,
  OpControlBarrier = 224,
  OpAtomicLoad = 227,
  OpAtomicCompareExchange = 230,
  OpAtomicIAdd = 234,
  OpAtomicSMin = 236,
  OpAtomicSMax = 238,
  OpAtomicAnd = 240,
  OpAtomicOr = 241,
  OpPhi = 245,
  OpLoopMerge = 246,
  OpSelectionMerge = 247,
  OpLabel = 248,
  OpBranch = 249,
  OpBranchConditional = 250,
  OpReturn = 253,
  OpGroupNonUniformShuffle = 345,
  OpAtomicFAddEXT = 6035,
  OpTypeCooperativeMatrixKHR = 4456,
  OpCooperativeMatrixLoadKHR = 4457,
  OpCooperativeMatrixStoreKHR = 4458,
  OpCooperativeMatrixMulAddKHR = 4459,
};

enum Capability : uint32_t {
  CapShader = 1,
  CapFloat16 = 9,
  CapFloat64 = 10,
  CapInt64 = 11,
  CapInt16 = 22,
  CapInt8 = 39,
  CapStorageBuffer16BitAccess = 4433,
  CapStorageBuffer8BitAccess = 4448,
  CapVulkanMemoryModel = 5345,
  CapAtomicFloat32AddEXT = 6033,
  CapCooperativeMatrixKHR = 6022,
};

enum StorageClass : uint32_t {
  SCInput = 1,
  SCWorkgroup = 4,
  SCPushConstant = 9,
  SCFunction = 7,
  SCStorageBuffer = 12,
};

enum Decoration : uint32_t {
  DecBlock = 2,
  DecArrayStride = 6,
  DecBuiltIn = 11,
  DecNonWritable = 24,
  DecBinding = 33,
  DecDescriptorSet = 34,
  DecOffset = 35,
};

enum BuiltIn : uint32_t { BuiltInWorkgroupId = 26, BuiltInLocalInvocationIndex = 29 };

enum Scope : uint32_t { ScopeDevice = 1, ScopeWorkgroup = 2, ScopeSubgroup = 3, ScopeQueueFamily = 5 };

// Memory semantics bits.
enum Semantics : uint32_t {
  SemAcquireRelease = 0x8,
  SemUniformMemory = 0x40,
  SemWorkgroupMemory = 0x100,
  SemMakeAvailable = 0x2000,
  SemMakeVisible = 0x4000,
};

// Memory operands bits.
enum MemoryAccess : uint32_t { MemNone = 0, MemAligned = 0x2, MemNonPrivatePointer = 0x20 };

enum CooperativeMatrixUse : uint32_t { MatrixA = 0, MatrixB = 1, MatrixAccumulator = 2 };
enum CooperativeMatrixOperands : uint32_t {
  CMNone = 0,
  CMASigned = 0x2,
  CMBSigned = 0x4,
  CMCSigned = 0x8,
  CMResultSigned = 0x10,
};
enum CooperativeMatrixLayout : uint32_t { RowMajorKHR = 0 };

/// "OpFAdd" for the opcodes above; nullptr for others.
const char* opcode_name(uint32_t opcode);

constexpr uint32_t kMagic = 0x07230203, kVersion16 = 0x00010600;
constexpr uint32_t kExecutionModelGLCompute = 5, kAddressingLogical = 0, kMemoryModelVulkan = 3;
constexpr uint32_t kExecutionModeLocalSize = 17;
constexpr uint32_t kSelectionControlNone = 0, kLoopControlNone = 0, kFunctionControlNone = 0;

// GLSL.std.450 instruction numbers.
enum GlslStd450 : uint32_t {
  GlslRoundEven = 2,
  GlslFAbs = 4,
  GlslSAbs = 5,
  GlslFloor = 8,
  GlslCeil = 9,
  GlslSin = 13,
  GlslCos = 14,
  GlslTanh = 21,
  GlslPow = 26,
  GlslExp = 27,
  GlslLog = 28,
  GlslExp2 = 29,
  GlslLog2 = 30,
  GlslSqrt = 31,
  GlslInverseSqrt = 32,
  GlslUMin = 38,
  GlslSMin = 39,
  GlslUMax = 41,
  GlslSMax = 42,
  GlslFma = 50,
  GlslPackHalf2x16 = 58,
  GlslUnpackHalf2x16 = 62,
  GlslNMin = 79,
  GlslNMax = 80,
};

}  // namespace tg::vulkan::spv
