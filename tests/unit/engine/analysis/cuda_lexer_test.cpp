// The CUDA lexer on text an editor holds: comments, literals, raw strings,
// directives, launch brackets, and what is left unterminated.
#include "engine/analysis/cuda_lexer.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

struct Seen {
  TokenKind kind;
  std::string text;
  bool operator==(const Seen&) const = default;
};

void PrintTo(const Seen& s, std::ostream* os) { *os << static_cast<int>(s.kind) << ":" << s.text; }

std::vector<Seen> seen(std::string_view source) {
  std::vector<Seen> out;
  for (const auto& t : lex_cuda(source).tokens) out.push_back({t.kind, std::string(t.text(source))});
  return out;
}

constexpr auto Id = TokenKind::Identifier;
constexpr auto Num = TokenKind::Number;
constexpr auto Str = TokenKind::String;
constexpr auto Com = TokenKind::Comment;
constexpr auto Dir = TokenKind::Directive;
constexpr auto P = TokenKind::Punct;

TEST(CudaLexerTest, LaunchBracketsAndLongestPunctuation) {
  EXPECT_EQ(seen("k<<<g, b>>>(x); a <<= 1; p->x; ::f; i++; a <=> b"),
            (std::vector<Seen>{{Id, "k"}, {P, "<<<"}, {Id, "g"}, {P, ","}, {Id, "b"}, {P, ">>>"}, {P, "("}, {Id, "x"},
                               {P, ")"}, {P, ";"}, {Id, "a"}, {P, "<<="}, {Num, "1"}, {P, ";"}, {Id, "p"}, {P, "->"},
                               {Id, "x"}, {P, ";"}, {P, "::"}, {Id, "f"}, {P, ";"}, {Id, "i"}, {P, "++"}, {P, ";"},
                               {Id, "a"}, {P, "<=>"}, {Id, "b"}}));
}

TEST(CudaLexerTest, CommentsAndStringsHideBracesAndLaunches) {
  EXPECT_EQ(seen("/* { <<< */ x // }\n\"}<<<\\\"\" '{' '\\''"),
            (std::vector<Seen>{{Com, "/* { <<< */"}, {Id, "x"}, {Com, "// }"}, {Str, "\"}<<<\\\"\""}, {Str, "'{'"}, {Str, "'\\''"}}));
}

TEST(CudaLexerTest, RawStringsWithDelimitersAndPrefixes) {
  EXPECT_EQ(seen("R\"x( )\" still )x\" u8R\"(a)\" L\"w\" LR"),
            (std::vector<Seen>{{Str, "R\"x( )\" still )x\""}, {Str, "u8R\"(a)\""}, {Str, "L\"w\""}, {Id, "LR"}}));
}

TEST(CudaLexerTest, NumbersWithSeparatorsExponentsAndSuffixes) {
  EXPECT_EQ(seen("1'000'000 1e-3f 0x1p-3 .5 2.f 256u"),
            (std::vector<Seen>{{Num, "1'000'000"}, {Num, "1e-3f"}, {Num, "0x1p-3"}, {Num, ".5"}, {Num, "2.f"}, {Num, "256u"}}));
}

TEST(CudaLexerTest, DirectivesRunToTheirLineEndThroughSplicesAndComments) {
  const std::string source = "#define M(x) \\\n  { x<<<1,1>>>(); }\n#include \"a//b.h\" /* c\n d */ int y;\n  # pragma unroll\nz";
  EXPECT_EQ(seen(source), (std::vector<Seen>{{Dir, "#define M(x) \\\n  { x<<<1,1>>>(); }"},
                                             {Dir, "#include \"a//b.h\" /* c\n d */ int y;"},
                                             {Dir, "# pragma unroll"},
                                             {Id, "z"}}));
}

TEST(CudaLexerTest, HashInsideALineIsNotADirective) {
  EXPECT_EQ(seen("a # b"), (std::vector<Seen>{{Id, "a"}, {P, "#"}, {Id, "b"}}));
}

TEST(CudaLexerTest, LineStartsLinesAndColumns) {
  const std::string source = "int a; /* x\n y */ int b;\n  c";
  const auto tokens = lex_cuda(source).tokens;
  ASSERT_EQ(tokens.size(), 8u);
  EXPECT_TRUE(tokens[0].line_start);
  EXPECT_FALSE(tokens[3].line_start);  // the comment shares line 0
  EXPECT_FALSE(tokens[4].line_start);  // `int` follows the comment's end on line 1
  EXPECT_EQ(tokens[4].line, 1u);
  EXPECT_EQ(tokens[4].column, 6u);
  EXPECT_TRUE(tokens[7].line_start);
  EXPECT_EQ(tokens[7].line, 2u);
  EXPECT_EQ(tokens[7].column, 2u);
}

TEST(CudaLexerTest, UnterminatedLiteralsAndCommentsAreFlaggedAndListed) {
  const std::string source = "a = \"open\nb = 'c\nR\"d(never\n";
  const CudaLex lex = lex_cuda(source);
  EXPECT_EQ(seen(source), (std::vector<Seen>{{Id, "a"}, {P, "="}, {Str, "\"open"}, {Id, "b"}, {P, "="}, {Str, "'c"},
                                             {Str, "R\"d(never\n"}}));
  EXPECT_TRUE(lex.tokens[2].unterminated);
  EXPECT_TRUE(lex.tokens[5].unterminated);
  EXPECT_TRUE(lex.tokens[6].unterminated);
  ASSERT_EQ(lex.problems.size(), 3u);
  EXPECT_EQ(lex.problems[0].message, "unterminated string literal");
  EXPECT_EQ(lex.problems[0].span, (Span{4, 9}));
  EXPECT_EQ(lex.problems[1].message, "unterminated character literal");
  EXPECT_EQ(lex.problems[2].message, "unterminated raw string literal");

  const CudaLex comment = lex_cuda("x /* never closed\n y");
  ASSERT_EQ(comment.problems.size(), 1u);
  EXPECT_EQ(comment.problems[0].message, "unterminated comment: '/*' has no '*/'");
  EXPECT_EQ(comment.problems[0].span, (Span{2, 20}));
}

TEST(CudaLexerTest, NonAsciiBytesBelongToIdentifiers) {
  EXPECT_EQ(seen("int caf\xc3\xa9 = 1;"), (std::vector<Seen>{{Id, "int"}, {Id, "caf\xc3\xa9"}, {P, "="}, {Num, "1"}, {P, ";"}}));
}

}  // namespace
}  // namespace hiera::engine::analysis
